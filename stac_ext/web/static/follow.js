// The search page's "Notify me" and "Process new data": the page's search saved as a
// subscription through /data/subscriptions, with the signed-in user's token.
"use strict";
(() => {
  const { api, message, showError, settings, ready } = window.geocatalog;
  const form = document.getElementById("follow");
  if (!form) return;
  const search = JSON.parse(document.getElementById("saved-search").textContent);
  const note = document.getElementById("follow-error");
  const done = document.getElementById("follow-done");
  const processes = document.getElementById("follow-process");

  function field(name) {
    const value = form.elements[name].value.trim();
    return value === "" ? null : value;
  }

  async function save(job) {
    showError(note, "");
    done.hidden = true;
    const body = { search, title: field("title") };
    if (field("webhook")) body.webhook = field("webhook");
    if (job) body.job = job;
    const result = await api(settings.data + "subscriptions", {
      method: "POST", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json" } });
    if (!result.ok) { showError(note, message(result)); return; }
    const link = document.getElementById("follow-link");
    link.href = settings.ui + "subscriptions";
    document.getElementById("follow-secret").hidden = !result.body.secret;
    document.getElementById("follow-secret-value").textContent = result.body.secret || "";
    done.hidden = false;
  }

  document.getElementById("notify-me").addEventListener("click", () => save(null));
  document.getElementById("process-new-data").addEventListener("click", () => {
    const window_ = {};
    if (field("window-items")) window_.items = Number(field("window-items"));
    if (field("window-hours")) window_.seconds = Number(field("window-hours")) * 3600;
    const job = { process: processes.value, itemsInput: field("items-input") || "files",
                  window: window_ };
    if (form.elements.publish.checked) job.publish = {};
    save(job);
  });

  // A file input (or an array of them) takes the window's items: one of its forms is a
  // collection input, as the API reads a process's inputs.
  function takesFiles(schema) {
    const one = schema.type === "array" && schema.items ? schema.items : schema;
    return (one.oneOf || []).some((form) => form && form.properties && form.properties.collection);
  }

  // The chosen process's file inputs: the first offered as the one the items go to, or a
  // word that it takes none (the API would refuse it when saved)
  async function describe() {
    const hint = document.getElementById("follow-process-files");
    hint.textContent = "";
    if (!processes.value) return;
    const found = await api(settings.processes + "processes/" + encodeURIComponent(processes.value));
    if (!found.ok) return;
    // its inputs are one JSON Schema, an object of them
    const files = Object.entries((found.body.inputs || {}).properties || {})
      .filter(([, schema]) => takesFiles(schema || {})).map(([name]) => name);
    if (!files.length) {
      hint.textContent = "This process takes no files: choose one with a file input.";
    } else if (!files.includes(field("items-input"))) {
      form.elements["items-input"].value = files[0];
    }
  }
  processes.addEventListener("change", describe);

  ready.then(async (signedIn) => {
    if (!signedIn) return;
    const offered = await api(settings.processes + "processes");
    if (!offered.ok) return;
    for (const process of offered.body.processes) {
      const option = document.createElement("option");
      option.value = process.id;
      option.textContent = process.title ? process.title + " (" + process.id + ")" : process.id;
      processes.append(option);
    }
    describe();
  });
})();
