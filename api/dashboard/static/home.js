// Home: queue state (GET /v1/runs?status=…&limit=1 → total), recent sweeps (GET /v1/sweeps),
// schedules (GET /v1/schedules), recent runs (GET /v1/runs), the papers' reproductions
// (GET /v1/reproductions; each preset links to its paper's page): what the signed-in user may see, with each one's owner.
"use strict";
(async function () {
  const { api, el, table, badge, fmt, when, ready, fatal } = window.tcplab;
  const STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"];

  // Whose it is, and whether the lab sees it (what a user lists is theirs and the shared).
  const owner = (x) => `${x.owner || "—"}${x.shared ? " (shared)" : ""}`;

  async function queue() {
    const totals = await Promise.all(STATUSES.map((s) => api(`/v1/runs?status=${s}&limit=1`).then((r) => r.total)));
    document.getElementById("queue").replaceChildren(...STATUSES.map((s, i) =>
      el("div", { class: "tile", "data-status": s, "data-total": totals[i] },
        el("div", { class: "n" }, totals[i]), el("div", { class: "label" }, s))));
  }

  async function sweeps() {
    const box = document.getElementById("sweeps");
    let page;
    try {
      page = await api("/v1/sweeps?limit=20");
    } catch (e) {
      if (e.status === 404) { box.replaceChildren(el("p", { class: "muted" }, "This server has no sweeps API.")); return; }
      throw e;
    }
    const done = (s) => { const p = s.progress || {}; return (p.succeeded || 0) + (p.failed || 0) + (p.cancelled || 0); };
    table(box, page.items, [
      { name: "name", text: true, value: (s) => s.name || s.id.slice(0, 8), link: (s) => `/dashboard/sweeps/${s.id}` },
      { name: "preset", text: true },
      { name: "status", text: true, value: (s) => s.status },
      { name: "axes", text: true, value: (s) => (s.axes || []).map((a) => `${a.path} (${(a.values || []).length})`).join(", ") },
      { name: "replications" },
      { name: "runs done", value: (s) => `${done(s)} / ${(s.progress || {}).total ?? "?"}` },
      { name: "owner", text: true, value: owner },
      { name: "created", text: true, value: (s) => when(s.created_at) },
    ], { id: "sweeps-table", empty: "No sweeps yet: POST /v1/sweeps." });
    box.querySelectorAll("#sweeps-table tbody tr").forEach((tr, i) => {
      const id = page.items[i].id;
      tr.cells[2].replaceChildren(badge(page.items[i].status));
      tr.append(el("td", { class: "text" }, el("a", { href: `/dashboard/comparisons?sweep_id=${id}` }, "comparison"), " · ",
        el("a", { href: `/dashboard/regions?sweep_id=${id}` }, "region map")));
    });
    box.querySelector("#sweeps-table thead tr")?.append(el("th", { class: "text" }, "see also"));
    box.insertAdjacentElement("afterbegin", el("p", { class: "muted" }, `${page.total} sweeps in all.`));
  }

  async function schedules() {
    const box = document.getElementById("schedules");
    let page;
    try {
      page = await api("/v1/schedules?limit=20");
    } catch (e) {
      if (e.status === 404) { box.replaceChildren(el("p", { class: "muted" }, "This server has no schedules API.")); return; }
      throw e;
    }
    table(box, page.items, [
      { name: "name", text: true, link: (s) => `/dashboard/schedules/${s.id}` },
      { name: "cron (UTC)", text: true, value: (s) => s.cron },
      { name: "enabled", text: true, value: (s) => (s.enabled ? "yes" : "no") },
      { name: "next firing", text: true, value: (s) => (s.next_fire_at ? when(s.next_fire_at) : null) },
      { name: "firings" },
      { name: "last error", text: true, value: (s) => s.last_error },
    ], { id: "schedules-table", empty: "No schedules yet: POST /v1/schedules." });
  }

  async function papers() {
    const list = await api("/v1/reproductions");
    table(document.getElementById("papers"), list, [
      { name: "paper", text: true, link: (p) => `/dashboard/papers/${p.paper}` },
      { name: "title", text: true, link: (p) => `/dashboard/papers/${p.paper}` },
      { name: "presets", text: true, value: (p) => p.presets.join(", ") },
      { name: "your reproduction", text: true, value: (p) => p.reproduction.status },
    ], { id: "papers-table" });
    document.querySelectorAll("#papers-table tbody tr").forEach((tr, i) => {
      const p = list[i];
      tr.cells[2].replaceChildren(...p.presets.flatMap((name, j) =>
        [j ? ", " : "", el("a", { href: `/dashboard/papers/${p.paper}`, class: "preset", "data-preset": name }, name)]));
    });
  }

  async function runs() {
    const page = await api("/v1/runs?limit=20");
    const box = document.getElementById("runs");
    table(box, page.items, [
      { name: "id", text: true, value: (r) => r.id.slice(0, 8), link: (r) => `/dashboard/runs/${r.id}` },
      { name: "status", text: true },
      { name: "preset", text: true },
      { name: "variants", text: true, value: (r) => r.variants.join(", ") },
      { name: "seed" },
      { name: "core s", value: (r) => r.core_wall_s },
      { name: "owner", text: true, value: owner },
      { name: "created", text: true, value: (r) => when(r.created_at) },
    ], { id: "runs-table", empty: "No runs yet: POST /v1/runs." });
    box.querySelectorAll("#runs-table tbody tr").forEach((tr, i) => tr.cells[1].replaceChildren(badge(page.items[i].status)));
    box.insertAdjacentElement("afterbegin", el("p", { class: "muted" }, `${fmt(page.total)} runs in all.`));
  }

  try {
    await Promise.all([queue(), papers(), sweeps(), schedules(), runs()]);
    ready();
  } catch (e) {
    fatal(e);
  }
})();
