// The execute form: fields back into the execution body (by each field's JSON path), posted
// with the user's token; the job page on 201, the API's message next to the form otherwise.
"use strict";
(() => {
  const { api, message, showError, settings } = window.geocatalog;

  function put(target, path, value) {
    let node = target;
    path.slice(0, -1).forEach((key) => { node = node[key] = node[key] || {}; });
    node[path[path.length - 1]] = value;
  }

  // a file: its address, else its text (typed, or read from an uploaded file) and name
  async function readFile(el) {
    const part = (name) => el.querySelector(`[data-part="${name}"]`);
    const href = part("href").value.trim();
    if (href) return { value: { href } };
    let contents = part("contents").value;
    let basename = part("basename").value.trim();
    const upload = part("upload").files[0];
    if (upload && !contents) {
      contents = await upload.text();
      basename = basename || upload.name;
    }
    if (!contents) return null;
    return { value: basename ? { contents, basename } : { contents } };
  }

  async function read(el) {
    const kind = el.dataset.kind;
    const required = "required" in el.dataset;
    if (kind === "file") return readFile(el);
    if (kind === "boolean") {
      return el.checked || el.defaultChecked || required ? { value: el.checked } : null;
    }
    const text = el.value;
    if (text.trim() === "") return null;
    const label = el.labels && el.labels.length ? el.labels[0].textContent.replace("*", "").trim() : el.id;
    if (kind === "number" || kind === "integer") {
      const number = Number(text);
      if (Number.isNaN(number)) throw new Error(label + ": not a number");
      return { value: number };
    }
    if (kind === "enum") return { value: JSON.parse(text) };
    if (kind === "json") {
      try { return { value: JSON.parse(text) }; } catch (e) { throw new Error(label + ": not valid JSON"); }
    }
    if (kind === "files") {
      return { value: text.split("\n").map((l) => l.trim()).filter((l) => l).map((href) => ({ href })) };
    }
    if (kind === "lines") {
      const lines = text.split("\n").map((l) => l.trim()).filter((l) => l);
      const numeric = ["number", "integer"].includes(el.dataset.items);
      return { value: lines.map((l) => (numeric ? Number(l) : l)) };
    }
    return { value: text };
  }

  // the form arrives with the page's fragment (see session.js)
  document.addEventListener("submit", async (event) => {
    const form = event.target;
    if (form.id !== "execute") return;
    event.preventDefault();
    const error = document.getElementById("execute-error");
    showError(error, "");
    let inputs = {};
    try {
      for (const el of form.querySelectorAll("[data-path]")) {
        const found = await read(el);
        if (found === null) continue;
        const path = JSON.parse(el.dataset.path);
        if (path.length === 0) inputs = found.value; else put(inputs, path, found.value);
      }
    } catch (e) {
      showError(error, e.message);
      return;
    }
    const body = { inputs };
    const project = document.getElementById("project").value;
    if (project) body.metadata = { project };
    const url = settings.processes + "processes/" + encodeURIComponent(form.dataset.process) + "/execution";
    const result = await api(url, {
      method: "POST", body: JSON.stringify(body), headers: { "Content-Type": "application/json" },
    });
    // secrets are sent once and never kept in the page
    for (const el of form.querySelectorAll("input[type=password]")) el.value = "";
    if (result.status === 201) {
      window.location.assign(settings.ui + "jobs/" + encodeURIComponent(result.body.jobID));
    } else {
      showError(error, message(result));
    }
  });
})();
