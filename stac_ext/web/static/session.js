// The signed-in user, for every page. The service keeps the sign-in (a session: its cookie
// is HttpOnly, its tokens stay on the server), so every tab and every reload is signed in
// alike, and no script here ever holds a token. The server writes who is signed in into the
// page's settings (`user`: name, groups, rights).
//
// `authorized()` is the one place a page's requests go out with the user's sign-in: to this
// service's own origin only, the session's cookie with them (the service sends them on with
// the session's token). Pages call `api()`, `apiText()` and `download()`, which use it.
"use strict";
(() => {
  const settings = JSON.parse(document.getElementById("geocatalog-settings").textContent);
  const origin = new URL(settings.base).origin;
  // what oidc-client-ts's user was to the pages: `profile.preferred_username`, its groups
  const signedIn = settings.user ? {
    username: settings.user.username,
    profile: { preferred_username: settings.user.username, groups: settings.user.groups },
    rights: settings.user.rights,
    expires: settings.user.expires,
  } : null;

  async function user() {
    return signedIn;
  }

  function sameOrigin(url) {
    const target = new URL(url, settings.base);
    if (target.origin !== origin) throw new Error("Not this service: " + target.origin);
    return target;
  }

  // The one place a request goes out with the user's sign-in: to this service's own origin
  // only (the browser adds the session's cookie, and its Fetch Metadata, which the service
  // checks before it acts on a change).
  async function authorized(url, options = {}) {
    const target = sameOrigin(url);
    const headers = Object.assign({ Accept: "application/json" }, options.headers || {});
    return fetch(target, Object.assign({}, options, { headers, credentials: "same-origin" }));
  }

  async function api(url, options = {}) {
    const response = await authorized(url, options);
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    return { status: response.status, ok: response.ok, body, headers: response.headers };
  }

  // A text resource of the API (a job's log).
  async function apiText(url) {
    const response = await authorized(url, { headers: { Accept: "text/plain" } });
    return { status: response.status, ok: response.ok, text: await response.text() };
  }

  // A file of the API (a job's result), saved by the browser under `name`.
  async function download(url, name) {
    const response = await authorized(url, { headers: { Accept: "*/*" } });
    if (!response.ok) return { status: response.status, ok: false, body: null };
    const link = document.createElement("a");
    link.href = URL.createObjectURL(await response.blob());
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
    window.setTimeout(() => URL.revokeObjectURL(link.href), 60000);
    return { status: response.status, ok: true, body: null };
  }

  // The API's own words: OGC exceptions have `detail`, STAC errors `description`.
  function message(result) {
    const body = result.body || {};
    if (result.status === 401) return "Sign in first (" + (body.detail || body.description || "401") + ").";
    return body.detail || body.description || body.title || ("HTTP " + result.status);
  }

  function showError(element, text) {
    element.textContent = text;
    element.hidden = !text;
  }

  function groups(who) {
    const claimed = (who && who.profile && who.profile.groups) || [];
    return claimed.map((g) => String(g).replace(/^\//, ""));
  }

  // The rights the sign-in grants (realm and client roles): only to decide which forms a
  // page offers; the API checks every request itself.
  function rights(who) {
    return (who && who.rights) || [];
  }

  // Sign-in and sign-out are the service's: a page goes there and comes back.
  function signIn() {
    const url = new URL(settings.ui + "session/sign-in");
    url.searchParams.set("return", window.location.href);
    window.location.assign(url.href);
  }

  function signOut() {
    document.getElementById("sign-out-form").requestSubmit();
  }

  function fillProjects(root, who) {
    for (const select of root.querySelectorAll("select[name=project]")) {
      for (const group of groups(who)) {
        const option = document.createElement("option");
        option.value = group;
        option.textContent = group;
        select.appendChild(option);
      }
    }
  }

  // Parts of a page only the signed-in user may see: rendered by the server (escaped, no
  // script) from what the API answers to the user, fetched here with their sign-in.
  async function loadFragment(element) {
    const response = await authorized(element.dataset.fragment,
                                      { headers: { Accept: "text/html" } });
    element.innerHTML = await response.text();
    element.dispatchEvent(new CustomEvent("geocatalog:fragment", { bubbles: true }));
  }

  const ready = user().then(async (who) => {
    // the parts read with the sign-in first: a form is shown only once it is the one the
    // user keeps (never replaced under a person typing)
    if (who) {
      await Promise.all([...document.querySelectorAll("[data-fragment]")].map(
        (element) => loadFragment(element)));
    }
    for (const el of document.querySelectorAll(".signed-in-only")) el.hidden = !who;
    for (const el of document.querySelectorAll(".needs-sign-in")) el.hidden = !!who;
    fillProjects(document, who);
    return who;
  });

  window.geocatalog = { settings, user, api, apiText, download, message, showError, sameOrigin,
    ready, groups, rights, signIn, signOut };
})();
