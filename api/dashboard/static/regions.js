// Region map: paper 000 Fig. 4 for the chosen R and RTO (GET /v1/regions, one row per (p, m)
// cell), with a sweep's points placed on it (?sweep_id=): p is the flow's measured loss event
// rate (GET /v1/sweeps/{id}/summary?metric=loss_event_rate), m the sweep's m axis, the marker
// the paired verdict at that point (GET /v1/comparisons/ratios).
"use strict";
(async function () {
  const t = window.tcplab;
  const { config, api, el, fmt, downloads, message, plot, ready, fatal, mean, groupBy } = t;
  const REGIONS = [
    ["equality", "equality (m < m*)", "#d4d7dd"],
    ["sbs_superior", "Slow-but-Steady superior", "#9ecae1"],
    ["imp_superior", "Impatient superior", "#fdae6b"],
    ["outside_model", "outside the model", "#ffffff"],
  ];
  const CODE = Object.fromEntries(REGIONS.map(([name], i) => [name, i]));
  const SYMBOLS = { a_better: "triangle-up", b_better: "triangle-down", no_significant_difference: "circle", insufficient_data: "circle-open" };
  const FLOW_COLORS = ["#1d3fbb", "#b3261e", "#0f7b6c", "#6c2c91"];
  const FIELDS = ["rtt_s", "rto_s", "m_star", "p_min", "p_max", "m_max"];
  const form = document.getElementById("inputs");
  let sweepPoints = null;  // {traces, notes, downloads: [...]}

  function inputs() {
    const q = {};
    for (const f of FIELDS) q[f] = document.getElementById(f).value || null;
    return q;
  }

  // A sweep's points: per flow, (measured p, m) with the verdict of its point.
  async function loadSweep(id) {
    const sweep = await api(`/v1/sweeps/${id}`);
    const mAxis = (sweep.axes.find((a) => a.path.endsWith("loss.m")) || {}).path;
    const note = document.getElementById("sweep-note");
    note.hidden = false;
    note.replaceChildren("Sweep ", el("a", { href: `/dashboard/sweeps/${id}` }, sweep.name || id.slice(0, 8)), ": ");
    if (!mAxis) { note.append("it has no m axis (flows[…].loss.m), so its points cannot be placed on the map."); return null; }
    const summaryUrl = `/v1/sweeps/${id}/summary?metric=loss_event_rate`;
    const summary = await api(summaryUrl);
    const flows = [...new Set(summary.rows.map((r) => r.flow))];
    let verdicts = new Map();
    let ratiosUrl = null;
    if (flows.length >= 2) {
      ratiosUrl = `/v1/comparisons/ratios?${t.qs({ sweep_id: id, metric: "throughput_pkts_per_rtt", flow_a: flows[0], flow_b: flows[1] })}`;
      verdicts = new Map((await api(ratiosUrl)).rows.map((r) => [r.point, r.verdict]));
    }
    const traces = flows.map((flow, i) => {
      const rows = summary.rows.filter((r) => r.flow === flow && r.mean !== null).sort((a, b) => a[mAxis] - b[mAxis]);
      const v = rows.map((r) => verdicts.get(r.point) || "insufficient_data");
      return {
        type: "scatter", mode: "markers", name: `${flow}: measured p`, x: rows.map((r) => r.mean), y: rows.map((r) => r[mAxis]),
        marker: { symbol: v.map((x) => SYMBOLS[x] || "circle"), size: rows.length > 15 ? 9 : 12, color: FLOW_COLORS[i % FLOW_COLORS.length], line: { width: 1, color: "#fff" } },
        text: v.map((x) => x.replace("a_better", `${flows[0]} significantly better`).replace("b_better", `${flows[1]} significantly better`).replaceAll("_", " ")),
        hovertemplate: "p = %{x:.4~g}, m = %{y}<br>%{text}<extra>%{fullData.name}</extra>",
        meta: { kind: "sweep", flow, points: rows.map((r) => r.point), verdicts: v },
      };
    });
    note.append(`each flow's measured loss event rate against ${mAxis}; marker ▲ ${flows[0]} significantly better, ▼ ${flows[1] || "—"} significantly better, ● no significant difference (throughput, paired 95 % interval).`);
    return { traces, summaryUrl, ratiosUrl };
  }

  // R and RTO measured in the sweep, when the page was not given them.
  async function measuredInputs(id) {
    const rows = (await api(`/v1/comparisons/models?sweep_id=${id}`)).rows;
    return { rtt_s: mean(rows.map((r) => r.rtt_s)), rto_s: mean(rows.map((r) => r.rto_s)) };
  }

  async function draw() {
    const q = inputs();
    const url = `/v1/regions?${t.qs(q)}`;
    let body;
    try {
      body = await api(url);
    } catch (e) {
      if (e.status !== 422) throw e;
      message(`Cannot draw these inputs: ${(e.detail || []).map((d) => `${d.loc.slice(-1)[0]} ${d.msg}`).join("; ")}`, "error");
      return;
    }
    message("");
    const np = body.p.length, nm = body.m.length;
    const z = body.m.map((_, j) => body.p.map((__, i) => CODE[body.rows[i * nm + j].region]));
    const text = body.m.map((_, j) => body.p.map((__, i) => body.rows[i * nm + j].region.replace("_", " ")));
    const scale = REGIONS.flatMap(([, , color], i) => [[i / REGIONS.length, color], [(i + 1) / REGIONS.length, color]]);
    const traces = [
      { type: "heatmap", x: body.p, y: body.m, z, text, zmin: -0.5, zmax: REGIONS.length - 0.5, colorscale: scale, showscale: false,
        hovertemplate: "p = %{x:.4~g}, m = %{y}: %{text}<extra></extra>", name: "regions", meta: { kind: "regions" } },
      { type: "scatter", mode: "lines", name: "m_t (crossover)", x: body.p, y: body.m_t, line: { color: "#333", width: 2 }, meta: { kind: "m_t" } },
      { type: "scatter", mode: "lines", name: "W_IMP − 3", x: body.p, y: body.w_imp_minus_3, line: { color: "#333", width: 1.5, dash: "dash" }, meta: { kind: "w_imp" } },
      { type: "scatter", mode: "lines", name: `m* = ${fmt(body.m_star)}`, x: [body.p[0], body.p[np - 1]], y: [body.m_star, body.m_star], line: { color: "#333", width: 1, dash: "dot" }, meta: { kind: "m_star" } },
      ...(sweepPoints ? sweepPoints.traces : []),
    ];
    await plot("plot-regions", traces, {
      xaxis: { type: "log", title: { text: t.label("loss_event_rate") }, range: [Math.log10(body.p[0]), Math.log10(body.p[np - 1])] },
      yaxis: { title: { text: t.label("flows[*].loss.m") }, range: [0.5, body.m[nm - 1] + 0.5] },
      title: { text: `R = ${fmt(body.rtt_s)} s, RTO = ${fmt(body.rto_s)} s, m* = ${fmt(body.m_star)}`, font: { size: 13 } },
      margin: { t: 40, r: 20, b: 50, l: 60 },
    }, { name: `regions-R${fmt(body.rtt_s)}-RTO${fmt(body.rto_s)}`, logs: [] });
    downloads(document.getElementById("regions-downloads"), "the map", url, "regions");
    const pts = document.getElementById("points-downloads");
    pts.replaceChildren();
    if (sweepPoints) {
      const a = el("span"), b = el("span");
      downloads(a, "the sweep's loss event rates", sweepPoints.summaryUrl, "sweep-loss-event-rate");
      pts.append(a);
      if (sweepPoints.ratiosUrl) { downloads(b, "its verdicts", sweepPoints.ratiosUrl, "sweep-ratios"); pts.append(" · ", b); }
    }
    document.getElementById("legend").replaceChildren(el("dl", {}, REGIONS.flatMap(([name, label, color]) => [
      el("dt", {}, el("span", { style: `display:inline-block;width:12px;height:12px;border:1px solid #999;background:${color};margin-right:6px` }), label,
        ` (${body.counts[name]} cells)`),
      el("dd", {}, body.legend[name]),
    ])));
    const next = new URLSearchParams(t.qs({ ...q, sweep_id: config.sweep_id }));
    history.replaceState(null, "", `${location.pathname}?${next}`);
  }

  try {
    for (const f of FIELDS) if (config.inputs[f]) document.getElementById(f).value = config.inputs[f];
    if (config.sweep_id) {
      document.getElementById("sweep_id").value = config.sweep_id;
      if (!config.inputs.rtt_s && !config.inputs.rto_s) {
        const measured = await measuredInputs(config.sweep_id);
        if (measured.rtt_s) document.getElementById("rtt_s").value = fmt(measured.rtt_s);
        if (measured.rto_s) document.getElementById("rto_s").value = fmt(measured.rto_s);
      }
      sweepPoints = await loadSweep(config.sweep_id);
    }
    form.addEventListener("submit", (event) => { event.preventDefault(); draw().then(ready).catch(fatal); });
    await draw();
    ready();
  } catch (e) {
    fatal(e);
  }
})();
