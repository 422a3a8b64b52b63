// The signed-in user, for every page: OIDC code flow + PKCE with oidc-client-ts, tokens in
// this tab's session storage (shared with STAC Browser: same issuer and client), and `api()`,
// which sends the token to this service's own origin only.
"use strict";
(() => {
  const settings = JSON.parse(document.getElementById("geocatalog-settings").textContent);
  const origin = new URL(settings.base).origin;
  const manager = new oidc.UserManager({
    authority: settings.issuer,
    client_id: settings.clientId,
    redirect_uri: settings.ui + "signed-in",
    // the code comes back in the URL's fragment, which the browser never sends to a server
    response_mode: "fragment",
    post_logout_redirect_uri: settings.base,
    scope: "openid profile",
    userStore: new oidc.WebStorageStateStore({ store: window.sessionStorage }),
  });

  async function user() {
    const found = await manager.getUser();
    return found && !found.expired ? found : null;
  }

  function sameOrigin(url) {
    const target = new URL(url, settings.base);
    if (target.origin !== origin) throw new Error("Not this service: " + target.origin);
    return target;
  }

  // The one place a token is attached: to this service's own origin only.
  async function authorized(url, options = {}) {
    const target = sameOrigin(url);
    const signedIn = await user();
    const headers = Object.assign({ Accept: "application/json" }, options.headers || {});
    if (signedIn) headers.Authorization = "Bearer " + signedIn.access_token;
    return fetch(target, Object.assign({}, options, { headers }));
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

  function groups(signedIn) {
    const claimed = (signedIn && signedIn.profile && signedIn.profile.groups) || [];
    return claimed.map((g) => String(g).replace(/^\//, ""));
  }

  // The rights the access token grants (realm and client roles), read from its payload:
  // only to decide which forms a page offers; the API checks every request itself.
  function rights(signedIn) {
    try {
      const part = signedIn.access_token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
      const claims = JSON.parse(atob(part));
      const roles = (claims.realm_access && claims.realm_access.roles) || [];
      const clients = Object.values(claims.resource_access || {}).flatMap((c) => c.roles || []);
      return [...roles, ...clients];
    } catch (error) {
      return [];
    }
  }

  function signIn() {
    return manager.signinRedirect({ state: { returnTo: window.location.href } });
  }

  async function signOut() {
    const signedIn = await user();
    if (signedIn) await manager.signoutRedirect();
  }

  function fillProjects(root, signedIn) {
    for (const select of root.querySelectorAll("select[name=project]")) {
      for (const group of groups(signedIn)) {
        const option = document.createElement("option");
        option.value = group;
        option.textContent = group;
        select.appendChild(option);
      }
    }
  }

  // Parts of a page only the signed-in user may see: rendered by the server (escaped, no
  // script) from what the API answers to the user's token, fetched here with it.
  async function loadFragment(element) {
    const response = await authorized(element.dataset.fragment,
                                      { headers: { Accept: "text/html" } });
    element.innerHTML = await response.text();
    element.dispatchEvent(new CustomEvent("geocatalog:fragment", { bubbles: true }));
  }

  const ready = user().then(async (signedIn) => {
    const name = document.getElementById("signed-in-as");
    document.getElementById("sign-in").hidden = !!signedIn;
    document.getElementById("sign-out").hidden = !signedIn;
    name.hidden = !signedIn;
    name.textContent = signedIn ? "Signed in as " + signedIn.profile.preferred_username : "";
    // the parts read with the token first: a form is shown only once it is the one the user
    // keeps (never replaced under a person typing)
    if (signedIn) {
      await Promise.all([...document.querySelectorAll("[data-fragment]")].map(
        (element) => loadFragment(element)));
    }
    for (const el of document.querySelectorAll(".signed-in-only")) el.hidden = !signedIn;
    for (const el of document.querySelectorAll(".needs-sign-in")) el.hidden = !!signedIn;
    fillProjects(document, signedIn);
    return signedIn;
  });
  document.getElementById("sign-in").addEventListener("click", () => signIn());
  document.getElementById("sign-out").addEventListener("click", () => signOut());

  window.geocatalog = { settings, manager, user, api, apiText, download, message, showError, sameOrigin, ready,
    groups, rights };
})();
