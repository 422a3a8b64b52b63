// The caller's jobs, newest first, with a status filter and the API's own paging links.
"use strict";
(() => {
  const { api, message, showError, settings, sameOrigin, ready } = window.geocatalog;
  const body = document.querySelector("#jobs tbody");
  const status = document.getElementById("status");
  const next = document.getElementById("next-page");
  const first = document.getElementById("first-page");
  const error = document.getElementById("jobs-error");
  let nextUrl = null;
  let latest = 0; // only the last request shown: a slower earlier answer must not overwrite it

  function cell(row, value) {
    const td = document.createElement("td");
    if (value instanceof Node) td.append(value); else td.textContent = value == null ? "" : value;
    row.append(td);
  }

  async function load(url) {
    const mine = ++latest;
    showError(error, "");
    const result = await api(url);
    if (mine !== latest) return;
    if (!result.ok) { showError(error, message(result)); return; }
    body.replaceChildren();
    for (const job of result.body.jobs) {
      const row = document.createElement("tr");
      const link = document.createElement("a");
      link.href = settings.ui + "jobs/" + encodeURIComponent(job.jobID);
      link.textContent = job.jobID;
      cell(row, link);
      cell(row, job.processID);
      cell(row, job.status);
      // a figure only where the job reported one: a deployed process reports none
      cell(row, job.status === "successful" ? "100 %"
        : job.status === "running" && job.progress ? job.progress + " %"
          : job.status === "running" ? "running" : "");
      cell(row, job.created ? new Date(job.created).toLocaleString() : "");
      cell(row, job.message);
      body.append(row);
    }
    const link = (result.body.links || []).find((l) => l.rel === "next");
    nextUrl = link ? sameOrigin(link.href).href : null;
    next.hidden = !nextUrl;
    first.hidden = url === firstPage();
  }

  function firstPage() {
    const url = new URL(settings.processes + "jobs");
    url.searchParams.set("limit", "20");
    if (status.value) url.searchParams.set("status", status.value);
    return url.href;
  }

  status.addEventListener("change", () => load(firstPage()));
  next.addEventListener("click", () => nextUrl && load(nextUrl));
  first.addEventListener("click", () => load(firstPage()));
  ready.then((signedIn) => { if (signedIn) load(firstPage()); });
})();
