// A job's page: its status info and log polled until it ends, its results once successful,
// its provenance once ended; dismissing it (running or ended), once confirmed.
"use strict";
(() => {
  const { api, apiText, download, message, showError, settings, ready } = window.geocatalog;
  const id = document.getElementById("job-id").dataset.job;
  const url = settings.processes + "jobs/" + encodeURIComponent(id);
  const error = document.getElementById("job-error");
  const dismiss = document.getElementById("dismiss");
  const confirmBox = document.getElementById("dismiss-confirm");
  const ENDED = ["successful", "failed", "dismissed"];
  // what dismissing does, said before it is done
  const CONSEQUENCES = {
    accepted: "Dismiss this job? It will not run.",
    running: "Stop this job and dismiss it? What it has written so far is not kept.",
    successful: "Dismiss this job? Its results, and their files in the service's store, "
      + "are deleted, and it leaves your job list. Items published from them and files in "
      + "your own storage stay.",
    failed: "Dismiss this job? Its log goes, and it leaves your job list.",
  };
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
  // what the data explorer opens: a NetCDF, Parquet, CSV or Zarr file of the service's store
  const EXPLORABLE = ["application/x-netcdf", "application/netcdf", "application/vnd.apache.parquet",
                      "text/csv", "application/vnd+zarr"];
  const explorable = (file) => ownApi(file.href) && EXPLORABLE.includes(String(file.type || "").split(";")[0]);

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
      if (explorable(file)) {  // a preview, before (or without) publishing it
        const explore = document.createElement("a");
        explore.className = "result-explore";
        explore.href = settings.ui + "explore?source=" + encodeURIComponent(file.href);
        explore.textContent = "Explore";
        view.append(" ", explore);
      }
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
    showProgress(job);
    document.getElementById("job-links").hidden = !["successful", "failed"].includes(job.status);
    dismiss.hidden = job.status === "dismissed" || !confirmBox.hidden;
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

  // The bar shows what the job reported: a process that reports no progress runs under a
  // moving bar (not a stuck 0 %); a job that did not finish shows none.
  function showProgress(job) {
    const bar = document.getElementById("job-progress");
    const progress = job.progress || 0;
    bar.hidden = !["running", "successful"].includes(job.status);
    if (job.status === "running" && progress === 0) {
      bar.removeAttribute("value");  // indeterminate
      text("job-percent", "running");
    } else if (job.status === "running" || job.status === "successful") {
      bar.value = job.status === "successful" ? 100 : progress;
      text("job-percent", bar.value + " %");
    } else if (job.status === "accepted") {
      text("job-percent", "waiting to start");
    } else {
      text("job-percent", progress > 0 ? "stopped at " + progress + " %" : "");
    }
  }

  let statusNow = null;
  dismiss.addEventListener("click", () => {
    statusNow = document.getElementById("job-status").textContent;
    text("dismiss-question", CONSEQUENCES[statusNow] || "Dismiss this job?");
    confirmBox.hidden = false;
    dismiss.hidden = true;
    document.getElementById("dismiss-no").focus();
  });
  document.getElementById("dismiss-no").addEventListener("click", () => {
    confirmBox.hidden = true;
    dismiss.hidden = false;
  });
  document.getElementById("dismiss-yes").addEventListener("click", async () => {
    confirmBox.hidden = true;
    dismissing = true;
    window.clearTimeout(timer);
    await polling;
    const result = await api(url, { method: "DELETE" });
    dismissing = false;
    if (result.ok) {
      text("job-status", result.body.status);
      text("job-message", result.body.message);
      showProgress(result.body);
      document.getElementById("results").hidden = true;
      document.getElementById("job-links").hidden = true;
      dismiss.hidden = true;
    } else {
      showError(error, message(result));
      dismiss.hidden = false;
      if (!ENDED.includes(statusNow)) schedule();
    }
  });

  ready.then((signedIn) => { if (signedIn) polling = poll(); });
})();
