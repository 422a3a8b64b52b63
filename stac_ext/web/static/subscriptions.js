// The caller's subscriptions, each with its state, its last deliveries and runs, and
// pause, resume and delete; everything through /data/subscriptions with her token.
"use strict";
(() => {
  const { api, message, showError, settings, ready } = window.geocatalog;
  const list = document.getElementById("subscriptions");
  const error = document.getElementById("subscriptions-error");
  const none = document.getElementById("no-subscriptions");

  function element(tag, text, className) {
    const made = document.createElement(tag);
    if (text != null) made.textContent = text;
    if (className) made.className = className;
    return made;
  }

  function when(value) {
    return value ? new Date(value).toLocaleString() : "";
  }

  function criteria(search) {
    return Object.entries(search).map(([name, value]) =>
      name + ": " + (typeof value === "string" ? value : JSON.stringify(value))).join("; ");
  }

  function table(headings, rows) {
    const made = element("table");
    const head = made.createTHead().insertRow();
    for (const heading of headings) head.append(element("th", heading));
    const body = made.createTBody();
    for (const values of rows) {
      const row = body.insertRow();
      for (const value of values) {
        const cell = row.insertCell();
        if (value instanceof Node) cell.append(value); else cell.textContent = value == null ? "" : value;
      }
    }
    return made;
  }

  async function change(subscription, body, note) {
    showError(note, "");
    const result = body === null
      ? await api(subscription.links[0].href, { method: "DELETE" })
      : await api(subscription.links[0].href, { method: "PATCH", body: JSON.stringify(body),
                                                headers: { "Content-Type": "application/json" } });
    if (!result.ok) { showError(note, message(result)); return; }
    load();
  }

  async function card(subscription) {
    const article = element("article", null, "subscription");
    article.dataset.id = subscription.id;
    article.append(element("h2", subscription.title || "Subscription " + subscription.id));
    article.append(element("p", criteria(subscription.search), "meta"));
    const state = element("p", null, "state");
    state.append(element("span", subscription.status, "badge status"));
    state.append(" " + subscription.events + " events");
    if (subscription.webhook) state.append(" · webhook " + new URL(subscription.webhook).host);
    article.append(state);
    if (subscription.pausedReason) article.append(element("p", subscription.pausedReason, "paused-reason"));
    if (subscription.delivery && subscription.delivery.lastError && subscription.status === "active"
        && subscription.delivery.failures) {
      article.append(element("p", "Failing: " + subscription.delivery.lastError, "error"));
    }
    const note = element("p", null, "error");
    note.setAttribute("role", "alert");
    note.hidden = true;
    const actions = element("p", null, "actions");
    const toggle = element("button", subscription.status === "active" ? "Pause" : "Resume");
    toggle.type = "button";
    toggle.addEventListener("click", () => change(subscription,
      { status: subscription.status === "active" ? "paused" : "active" }, note));
    const remove = element("button", "Delete", "danger");
    remove.type = "button";
    remove.addEventListener("click", () => change(subscription, null, note));
    actions.append(toggle, " ", remove);
    article.append(actions, note);

    const links = Object.fromEntries(subscription.links.map((l) => [l.rel, l.href]));
    if (links.deliveries) {
      const found = await api(links.deliveries + "?limit=10");
      if (found.ok) {
        article.append(element("h3", "Last deliveries"));
        article.append(found.body.deliveries.length
          ? table(["When", "Event", "Item", "Status", "Error"], found.body.deliveries.map((d) =>
            [when(d.attempted), d.kind, d.item, d.status == null ? "no answer" : d.status, d.error]))
          : element("p", "None yet.", "meta"));
      }
    }
    if (links.runs) {
      const found = await api(links.runs + "?limit=10");
      if (found.ok) {
        article.append(element("h3", "Runs of " + subscription.job.process));
        article.append(found.body.runs.length
          ? table(["Window", "Items", "Status", "Job", "Message"], found.body.runs.map((r) => {
            let job = "";
            if (r.job) {
              job = element("a", "job");
              job.href = settings.ui + "jobs/" + encodeURIComponent(r.job.split("/").pop());
            }
            return [r.window, r.items, r.status, job, r.message];
          }))
          : element("p", "None yet: its first window is open.", "meta"));
      }
    }
    const feed = element("p", "Its feed, for your scripts (with your token): ", "meta");
    feed.append(element("code", links.events));
    article.append(feed);
    return article;
  }

  async function load() {
    showError(error, "");
    const result = await api(settings.data + "subscriptions");
    if (!result.ok) { showError(error, message(result)); return; }
    const cards = await Promise.all(result.body.subscriptions.map(card));
    list.replaceChildren(...cards);
    none.hidden = cards.length > 0;
  }

  ready.then((signedIn) => { if (signedIn) load(); });
})();
