// A job's page: its status info and log polled until it ends, its results once successful,
// dismiss.
"use strict";
(() => {
  const { api, apiText, download, message, showError, settings, ready } = window.geocatalog;
  const id = document.getElementById("job-id").dataset.job;
  const url = settings.processes + "jobs/" + encodeURIComponent(id);
  const error = document.getElementById("job-error");
  const dismiss = document.getElementById("dismiss");
  const ENDED = ["successful", "failed", "dismissed"];
  const text = (elementId, value) => { document.getElementById(elementId).textContent = value || ""; };
  const when = (value) => (value ? new Date(value).toLocaleString() : "");
  // Dismiss waits for a poll in flight and stops the next one: the job is gone for its owner
  // once dismissed (404), and a late poll would overwrite what Dismiss shows.
  let timer = null;
  let polling = Promise.resolve();
  let dismissing = false;
  const schedule = () => { timer = window.setTimeout(() => { polling = poll(); }, 400); };

  const isFile = (value) => value && typeof value === "object" && typeof value.href === "string";
  const ownApi = (href) => href.startsWith(settings.processes);

  // A stored file: its name, size and where it is; a Download button for a file of the
  // service's store (read with the signed-in user's token), the items it became.
  function fileView(file) {
    const view = document.createElement("div");
    view.className = "result-file";
    const name = document.createElement("strong");
    name.textContent = file.basename || file.href;
    view.append(name, " (" + (file.type || "file") + ", " + (file.size || 0).toLocaleString() + " bytes) ");
    if (ownApi(file.href)) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = "Download";
      button.addEventListener("click", async () => {
        const result = await download(file.href, file.basename || "result");
        if (!result.ok) showError(error, message(result));
      });
      view.append(button);
    } else {
      const where = document.createElement("code");
      where.className = "result-href";
      where.textContent = file.href;
      view.append("in your storage: ", where);
    }
    if (typeof file.contents === "string") {  // small text: shown as well
      const contents = document.createElement("pre");
      contents.className = "result-contents";
      contents.textContent = file.contents;
      view.append(contents);
    }
    for (const item of file.items || []) {
      const link = document.createElement("a");
      link.href = item;
      link.className = "result-item";
      link.textContent = "the item it became";
      view.append(" · ", link);
    }
    return view;
  }

  function showResults(results) {
    const list = document.getElementById("result-values");
    list.replaceChildren();
    for (const [name, value] of Object.entries(results || {})) {
      const term = document.createElement("dt");
      term.textContent = name;
      const description = document.createElement("dd");
      const files = Array.isArray(value) ? value.filter(isFile) : (isFile(value) ? [value] : []);
      if (files.length) description.append(...files.map(fileView));
      else description.textContent = typeof value === "string" ? value : JSON.stringify(value);
      list.append(term, description);
    }
    text("results-json", JSON.stringify(results, null, 2));
    document.getElementById("results").hidden = false;
  }

  // The log as the API has it now; the view follows its end unless the reader scrolled up.
  async function showLog() {
    const result = await apiText(url + "/logs");
    if (!result.ok) return;
    const view = document.getElementById("job-log");
    const atEnd = view.scrollTop + view.clientHeight >= view.scrollHeight - 4;
    if (view.textContent !== result.text) view.textContent = result.text;
    if (atEnd) view.scrollTop = view.scrollHeight;
    document.getElementById("log").hidden = !result.text;
  }

  async function poll() {
    const result = await api(url);
    if (!result.ok) {
      showError(error, message(result));
      dismiss.hidden = true;
      return;
    }
    const job = result.body;
    text("job-process", job.processID);
    text("job-status", job.status);
    // a failed job's message is its error, shown once, in the error box below
    text("job-message", job.status === "failed" ? "" : job.message);
    text("job-created", when(job.created));
    text("job-started", when(job.started));
    text("job-finished", when(job.finished));
    const progress = job.progress == null ? 0 : job.progress;
    document.getElementById("job-progress").value = progress;
    text("job-percent", progress + " %");
    dismiss.hidden = ENDED.includes(job.status);
    await showLog();
    if (job.status === "successful") {
      const results = await api(url + "/results");
      if (results.ok) showResults(results.body); else showError(error, message(results));
    } else if (job.status === "failed") {
      showError(error, job.message || "The job failed.");
    } else if (!ENDED.includes(job.status) && !dismissing) {
      schedule();
    }
  }

  dismiss.addEventListener("click", async () => {
    dismissing = true;
    window.clearTimeout(timer);
    await polling;
    const result = await api(url, { method: "DELETE" });
    dismissing = false;
    if (result.ok) {
      text("job-status", result.body.status);
      text("job-message", result.body.message);
      dismiss.hidden = true;
    } else {
      showError(error, message(result));
      schedule();
    }
  });

  ready.then((signedIn) => { if (signedIn) polling = poll(); });
})();
