// The deploy form: the document pasted or read from a file, sent as what it is (CWL in
// YAML or JSON, or an OGC application package) to the process API with the user's
// sign-in; the API's answer (its rules, 400/403/409) is shown next to the form.
"use strict";
(() => {
  const { api, message, showError, settings } = window.geocatalog;
  const form = document.getElementById("deploy-form");
  if (!form) return;
  const documentField = document.getElementById("deploy-document");
  const kind = document.getElementById("deploy-kind");
  const visibility = document.getElementById("deploy-visibility");
  const error = document.getElementById("deploy-error");

  // What the text is, by its shape: JSON naming an execution unit is an application
  // package, other JSON is CWL's JSON form, anything else CWL's YAML.
  function mediaType(text) {
    const trimmed = text.trim();
    if (!trimmed.startsWith("{")) return "application/cwl+yaml";
    try {
      const parsed = JSON.parse(trimmed);
      return parsed && (parsed.executionUnit || parsed.processDescription)
        ? "application/ogcapppkg+json" : "application/cwl+json";
    } catch (e) {
      return "application/cwl+json";  // the API says what is wrong with it
    }
  }
  const KINDS = { "application/cwl+yaml": "CWL (YAML)", "application/cwl+json": "CWL (JSON)",
    "application/ogcapppkg+json": "an OGC application package" };
  function showKind() {
    kind.textContent = documentField.value.trim()
      ? "Sent as " + KINDS[mediaType(documentField.value)] + "." : "";
  }
  documentField.addEventListener("input", showKind);
  showKind();  // a text there before this script ran: typed early, or restored on "back"

  document.getElementById("deploy-file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (!file) return;
    documentField.value = await file.text();
    showKind();
  });

  function showProject() {
    document.getElementById("deploy-project-field").hidden = visibility.value !== "project";
  }
  visibility.addEventListener("change", showProject);
  showProject();

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    showError(error, "");
    const url = new URL(settings.processes + "processes");
    url.searchParams.set("visibility", visibility.value);
    if (visibility.value === "project") {
      url.searchParams.set("project", document.getElementById("deploy-project").value);
    }
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    kind.textContent = "Deploying: the service checks the package first…";
    const result = await api(url.href, { method: "POST", body: documentField.value,
      headers: { "Content-Type": mediaType(documentField.value) } });
    button.disabled = false;
    showKind();
    if (result.ok && result.body && result.body.id) {
      window.location.assign(settings.ui + "processes/" + encodeURIComponent(result.body.id));
      return;
    }
    showError(error, message(result));
  });
})();
