// Proposals: proposing is one POST to /data/proposals, deciding one POST to its accept or
// reject, each with the user's token; the API's answer (rights, 400/409) is shown beside
// the form, and the page read again once it succeeded.
"use strict";
(() => {
  const { api, message, showError, settings, ready, rights } = window.geocatalog;
  const proposals = settings.data + "proposals";
  const json = { "Content-Type": "application/json" };

  // the decide forms are offered to administrators (the API still checks each request);
  // they come again with the user's token (a fragment), so they are shown once it is there
  async function showDecisions() {
    const signedIn = await ready;
    const admin = !!signedIn && rights(signedIn).includes(settings.adminRight);
    for (const form of document.querySelectorAll("form.admin-only")) form.hidden = !admin;
  }
  showDecisions();
  document.addEventListener("geocatalog:fragment", () => showDecisions());

  const propose = document.getElementById("propose");
  propose.addEventListener("submit", async (event) => {
    event.preventDefault();
    const error = propose.querySelector(".error");
    showError(error, "");
    const form = propose.elements;
    const body = { kind: "collection",
      collection: form.convention.value.trim() + "-" + form.standard_name.value.trim().toLowerCase() };
    if (form.description.value.trim()) body.description = form.description.value.trim();
    if (form.comment.value.trim()) body.comment = form.comment.value.trim();
    const result = await api(proposals, { method: "POST", headers: json,
      body: JSON.stringify(body) });
    if (result.ok) window.location.reload(); else showError(error, message(result));
  });

  // one listener for every decide form, those of fragments too
  document.addEventListener("submit", async (event) => {
    const form = event.target;
    if (!form.classList.contains("decide")) return;
    event.preventDefault();
    const error = form.querySelector(".error");
    showError(error, "");
    const decision = event.submitter ? event.submitter.value : "accept";
    const result = await api(proposals + "/" + encodeURIComponent(form.dataset.id) + "/"
      + decision, { method: "POST", headers: json,
      body: JSON.stringify({ reason: form.elements.reason.value }) });
    if (result.ok) window.location.reload(); else showError(error, message(result));
  });
})();
