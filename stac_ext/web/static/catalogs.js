// Organising catalogs: each form is one request to /data/catalogs with the user's token;
// the API's answer (rights, ownership, 400/409) is shown next to the form.
"use strict";
(() => {
  const { api, message, showError, settings, ready, groups, rights } = window.geocatalog;
  const catalogs = settings.data + "catalogs";
  // a catalog's path of ids, each encoded: an id can never carry a query into the URL
  const encoded = (p) => p.split("/").map(encodeURIComponent).join("/");
  const json = { "Content-Type": "application/json" };
  const pageOf = (p) => settings.ui + "catalogs/" + encoded(p);

  // the page's forms, bound once it is there: at load, or (a catalog only the user may
  // read) once it came with their token (session.js's fragment)
  setup();
  document.addEventListener("geocatalog:fragment", (event) => {
    if (event.target.id === "catalog-page") setup();
  });

  function setup() {
  const actions = document.getElementById("catalog-actions");
  const path = actions ? encoded(actions.dataset.path) : "";

  // the forms are offered to those the API lets change this catalog: its owner, the members
  // of its project, administrators; editing its fields also needs the update right, and
  // one without it is told which, and how it is had (the API still decides each request)
  if (actions) {
    ready.then((signedIn) => {
      if (!signedIn) return;
      const project = actions.dataset.project;
      const held = rights(signedIn);
      const admin = held.includes(settings.adminRight);
      const may = actions.dataset.owner === signedIn.profile.preferred_username
        || (project && groups(signedIn).includes(project)) || admin;
      const updates = admin || held.includes(actions.dataset.updateRight);
      actions.hidden = !may;
      document.getElementById("not-yours").hidden = !!may;
      for (const id of ["edit-catalog", "replace-links"]) {
        document.getElementById(id).hidden = !updates;
      }
      const needs = document.getElementById("needs-right");
      needs.hidden = !may || updates;
      const how = needs.querySelector(".how");
      if (settings.localSignIn) how.textContent = how.dataset.local;
    });
  }

  function links(text) {
    return text.split("\n").map((l) => l.trim()).filter((l) => l).map((line) => {
      const [collection, item] = line.split("/", 2);
      const href = settings.data + "collections/" + encodeURIComponent(collection);
      return item ? { rel: "item", href: href + "/items/" + encodeURIComponent(item) }
        : { rel: "child", href };
    });
  }

  // `unconfirmed`: what to tell a person when the API refuses because its `_force` (the
  // form's confirmation box) was not given; the API's own words name a query parameter
  function handle(id, act, unconfirmed) {
    const form = document.getElementById(id);
    if (!form) return;
    const error = form.querySelector(".error");
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      showError(error, "");
      const result = await act(form);
      if (result.ok) return;
      const confirmed = form.elements.force && form.elements.force.checked;
      const refused = result.status === 400 || result.status === 409;
      showError(error, unconfirmed && refused && form.elements.force && !confirmed
        ? unconfirmed : message(result));
    });
  }

  handle("create-catalog", async (form) => {
    const body = { id: form.elements.id.value.trim(), type: "Catalog",
      description: form.elements.description.value };
    if (form.elements.title.value) body.title = form.elements.title.value;
    if (form.elements.project.value) body.project = form.elements.project.value;
    body.visibility = form.elements.visibility.value;
    if (form.elements.links.value.trim()) body.links = links(form.elements.links.value);
    const parent = form.dataset.parent;
    const result = await api(parent ? catalogs + "/" + encoded(parent) : catalogs,
      { method: "POST", headers: json, body: JSON.stringify(body) });
    if (result.ok) window.location.assign(pageOf(parent ? parent + "/" + body.id : body.id));
    return result;
  });

  // the catalog as the API has it now, less its links: a PUT replaces the catalog, so
  // what a form does not edit (keywords, license, extensions) goes back as it is
  async function current() {
    const result = await api(catalogs + "/" + path);
    if (!result.ok) return { result };
    const body = result.body;
    body.kept = (body.links || []).filter((l) => !targets(l));
    delete body.links;
    return { body };
  }

  // a link the links form replaces: to a collection or an item of this service
  const targets = (l) => (l.rel === "item" || l.rel === "child")
    && String(l.href).startsWith(settings.data + "collections/");

  handle("edit-catalog", async (form) => {
    const { body, result } = await current();
    if (!body) return result;
    delete body.kept;  // without links, the PUT keeps the catalog's
    Object.assign(body, { description: form.elements.description.value,
      visibility: form.elements.visibility.value });
    if (form.elements.title.value) body.title = form.elements.title.value; else delete body.title;
    const saved = await api(catalogs + "/" + path,
      { method: "PUT", headers: json, body: JSON.stringify(body) });
    if (saved.ok) window.location.reload();
    return saved;
  });

  handle("replace-links", async (form) => {
    const { body, result } = await current();
    if (!body) return result;
    body.links = body.kept.concat(links(form.elements.links.value));
    delete body.kept;
    // unconfirmed, the API itself refuses (400) and says why
    const force = form.elements.force.checked ? "?_force=true" : "";
    const saved = await api(catalogs + "/" + path + force,
      { method: "PUT", headers: json, body: JSON.stringify(body) });
    if (saved.ok) window.location.reload();
    return saved;
  }, "Nothing was changed: tick \u201cI understand\u201d above to replace the links.");

  handle("delete-catalog", async (form) => {
    const force = form.elements.force && form.elements.force.checked ? "?_force=true" : "";
    const result = await api(catalogs + "/" + path + force, { method: "DELETE" });
    if (result.ok) {
      const parent = form.dataset.parent;
      window.location.assign(parent ? pageOf(parent) : settings.ui + "catalogs");
    }
    return result;
  }, "Nothing was deleted: tick the box above to confirm what goes with this catalog.");
  }
})();
