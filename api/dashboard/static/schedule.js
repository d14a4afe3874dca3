// Schedule: one metric of one grid point and flow group across the schedule's firings
// (GET /v1/schedules/{id}/history?metric=): each firing's mean and 95 % CI, the baseline's
// band, the flagged firings; the firings with links to their sweeps
// (GET /v1/schedules/{id}/sweeps); the download of what is plotted.
"use strict";
(async function () {
  const t = window.tcplab;
  const { config, api, el, table, badge, fmt, when, label, downloads, message, plot, ready, fatal } = t;
  const id = config.schedule_id;
  const UP = "#c0392b", DOWN = "#8e44ad", MEAN = "#2463eb", BAND = "rgba(36, 99, 235, 0.12)";

  let schedule = null;
  let hist = null;  // the last history body fetched (for state.metric)
  const state = { metric: config.metric, point: config.point, flow: config.flow };

  function statusLine(s) {
    document.getElementById("title").textContent = `Schedule ${s.name}`;
    document.getElementById("schedule-status").replaceChildren(
      el("span", { id: "enabled", class: `badge ${s.enabled ? "succeeded" : "cancelled"}` }, s.enabled ? "enabled" : "disabled"), " · cron ",
      el("code", {}, s.cron), " (UTC) · ", `${s.firings} firings`,
      s.builtin ? el("span", {}, " · built-in ", el("code", {}, s.builtin)) : "");
    document.getElementById("schedule-detail").replaceChildren(
      `next firing ${when(s.next_fire_at)} · last fired ${when(s.last_fired_at)} · owner ${s.owner ?? "—"} · ${s.shared ? "shared with the lab" : "private"}`,
      s.last_error ? el("span", { id: "last-error", class: "error" }, ` · last error: ${s.last_error}`) : "");
  }

  function historyUrl() { return `/v1/schedules/${id}/history?${t.qs({ metric: state.metric })}`; }

  function options(select, values, labels, chosen) {
    select.replaceChildren(...values.map((v, i) => el("option", { value: v, selected: v === chosen }, labels[i])));
    select.value = chosen;
  }

  // The points and flow groups the rows have, in the order of the firings' grid.
  function choices(rows) {
    const points = new Map(), flows = new Set();
    for (const r of rows) {
      if (!points.has(r.point_key)) points.set(r.point_key, (hist.axes || []).map((a) => `${a.split(".").pop()} = ${fmt(r[a])}`).join(", ") || "the one point");
      flows.add(r.flow);
    }
    return { points, flows: [...flows] };
  }

  function selected(rows) {
    return rows.filter((r) => r.point_key === state.point && r.flow === state.flow)
      .sort((a, b) => a.fired_for.localeCompare(b.fired_for));
  }

  function traces(rows) {
    const based = rows.filter((r) => r.baseline_ci_low !== null && r.baseline_ci_high !== null);
    const has = (r) => r.ci_low !== null && r.ci_high !== null;
    const flagged = rows.filter((r) => r.shift);
    return [
      { type: "scatter", mode: "lines", name: "baseline 95 % CI (low)", x: based.map((r) => r.fired_for), y: based.map((r) => r.baseline_ci_low),
        line: { width: 0, color: BAND }, showlegend: false, hoverinfo: "skip", meta: { kind: "baseline-low" } },
      { type: "scatter", mode: "lines", name: "baseline 95 % CI", x: based.map((r) => r.fired_for), y: based.map((r) => r.baseline_ci_high),
        fill: "tonexty", fillcolor: BAND, line: { width: 0, color: BAND }, hoverinfo: "skip", meta: { kind: "baseline-high" } },
      { type: "scatter", mode: "lines", name: "baseline mean", x: rows.filter((r) => r.baseline_mean !== null).map((r) => r.fired_for),
        y: rows.filter((r) => r.baseline_mean !== null).map((r) => r.baseline_mean), line: { dash: "dot", width: 1.5, color: "#6b7280" },
        meta: { kind: "baseline-mean" } },
      { type: "scatter", mode: "lines+markers", name: "firing mean (95 % CI)", x: rows.map((r) => r.fired_for), y: rows.map((r) => r.mean),
        error_y: { type: "data", symmetric: false, visible: true, thickness: 1.2, width: 4,
          array: rows.map((r) => (has(r) ? r.ci_high - r.mean : null)), arrayminus: rows.map((r) => (has(r) ? r.mean - r.ci_low : null)) },
        customdata: rows.map((r) => [r.n, r.ci_low, r.ci_high, r.core_version]),
        hovertemplate: "%{x}: %{y:.4~g}<br>95 % CI %{customdata[1]:.4~g} – %{customdata[2]:.4~g}<br>n = %{customdata[0]} · core %{customdata[3]}<extra></extra>",
        line: { color: MEAN, width: 2 }, marker: { size: 7, color: MEAN }, meta: { kind: "mean", sweeps: rows.map((r) => r.sweep_id) } },
      { type: "scatter", mode: "markers", name: "moved (▲ up, ▼ down)", x: flagged.map((r) => r.fired_for), y: flagged.map((r) => r.mean),
        text: flagged.map((r) => r.shift), hovertemplate: "%{x}: moved %{text} (%{y:.4~g})<extra></extra>",
        marker: { size: 15, symbol: flagged.map((r) => (r.shift === "up" ? "triangle-up" : "triangle-down")),
          color: flagged.map((r) => (r.shift === "up" ? UP : DOWN)), line: { width: 1, color: "#fff" } },
        meta: { kind: "shift", shifts: flagged.map((r) => r.shift), sweeps: flagged.map((r) => r.sweep_id) } },
    ];
  }

  const draw = t.latestOnly(async (current) => {
    const url = historyUrl();
    const body = await api(url);
    if (!current()) return;
    hist = body;
    const rows = hist.rows;
    const { points, flows } = choices(rows);
    if (!points.has(state.point)) state.point = points.keys().next().value ?? null;
    if (!flows.includes(state.flow)) state.flow = flows.includes("core") && state.metric.startsWith("core_") ? "core" : flows[0] ?? null;
    options(document.getElementById("point"), [...points.keys()], [...points.values()], state.point);
    options(document.getElementById("flow"), flows, flows, state.flow);
    const shown = selected(rows);
    if (!rows.length) message(`No firing has a value of ${state.metric} yet (runs answered from stored results have no core timings).`);
    else message("");
    await plot("plot-history", traces(shown), {
      xaxis: { title: { text: "firing time (UTC)" }, type: "date" },
      yaxis: { title: { text: label(state.metric, "mean and 95 % CI") } },
    }, { name: `schedule-${id.slice(0, 8)}-${state.metric}` });
    if (!current()) return;
    downloads(document.getElementById("history-downloads"), "the history of this metric", url, `schedule-${id}-${state.metric}`);
    firingsTable(shown);
    const q = new URLSearchParams(location.search);
    q.set("metric", state.metric);
    if (state.point) q.set("point", state.point);
    if (state.flow) q.set("flow", state.flow);
    window.history.replaceState(null, "", `${location.pathname}?${q}`);
  });

  let sweepsById = new Map();
  function firingsTable(shown) {
    const byFiring = new Map(shown.map((r) => [r.sweep_id, r]));
    const items = [...sweepsById.values()];
    table(document.getElementById("firings"), items, [
      { name: "fired for", text: true, value: (s) => when(s.fired_for) },
      { name: "sweep", text: true, value: (s) => s.id.slice(0, 8), link: (s) => `/dashboard/sweeps/${s.id}` },
      { name: "status", text: true, value: (s) => s.status },
      { name: "runs", value: (s) => `${s.progress.succeeded} / ${s.progress.total}` },
      { name: "core", text: true, value: (s) => (byFiring.get(s.id) || {}).core_version },
      { name: "n", value: (s) => (byFiring.get(s.id) || {}).n },
      { name: "mean", value: (s) => (byFiring.get(s.id) || {}).mean },
      { name: "ci_low", value: (s) => (byFiring.get(s.id) || {}).ci_low },
      { name: "ci_high", value: (s) => (byFiring.get(s.id) || {}).ci_high },
      { name: "baseline mean", value: (s) => (byFiring.get(s.id) || {}).baseline_mean },
      { name: "shift", text: true, value: (s) => (byFiring.get(s.id) || {}).shift },
    ], { id: "firings-table", empty: "No firing yet.", rowClass: (s) => ((byFiring.get(s.id) || {}).shift ? `shift ${(byFiring.get(s.id)).shift}` : null) });
    document.querySelectorAll("#firings-table tbody tr").forEach((tr, i) => {
      tr.dataset.sweep = items[i].id;
      tr.cells[2].replaceChildren(badge(items[i].status));
    });
  }

  function setUpControls() {
    const metric = document.getElementById("metric");
    metric.replaceChildren(...config.metrics.map((m) => el("option", { value: m, selected: m === state.metric }, label(m))));
    const redraw = () => draw().catch(fatal);
    metric.addEventListener("change", () => { state.metric = metric.value; redraw(); });
    document.getElementById("point").addEventListener("change", (e) => { state.point = e.target.value; redraw(); });
    document.getElementById("flow").addEventListener("change", (e) => { state.flow = e.target.value; redraw(); });
  }

  try {
    schedule = await api(`/v1/schedules/${id}`);
    statusLine(schedule);
    const page = await api(`/v1/schedules/${id}/sweeps?limit=500`);
    sweepsById = new Map(page.items.map((s) => [s.id, s]));
    if (!state.metric) state.metric = schedule.builtin === "core-benchmark" ? "core_events_per_s" : "throughput_pkts_per_rtt";
    document.getElementById("plot-card").hidden = false;
    setUpControls();
    await draw();
    ready();
  } catch (e) {
    fatal(e);
  }
})();
