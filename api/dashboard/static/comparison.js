// Comparison of a sweep (or a run): model-vs-simulation errors (GET /v1/comparisons/models),
// variant ratios with confidence intervals and verdicts (GET /v1/comparisons/ratios), and the
// paper's numbers beside ours (GET /v1/comparisons/paper).
"use strict";
(async function () {
  const t = window.tcplab;
  const { config, api, el, table, fmt, coord, label, downloads, message, plot, ready, fatal, groupBy, byAxis } = t;
  const subject = config.sweep_id ? { sweep_id: config.sweep_id } : { run_id: config.run_id };
  const COLORS = ["#2463eb", "#e4572e", "#17a398", "#8e44ad", "#f39c12", "#34495e", "#c0392b", "#16a085"];
  const VERDICT_COLORS = { a_better: "#1a7f37", b_better: "#c0392b", no_significant_difference: "#8a8f98", insufficient_data: "#c8ccd2" };

  let sweep = null;
  let axis = null;  // the axis the plots run along (a sweep's first axis with several values)
  const pct = (x) => (typeof x === "number" ? 100 * x : null);

  async function describe() {
    const box = document.getElementById("subject");
    if (config.sweep_id) {
      sweep = await api(`/v1/sweeps/${config.sweep_id}`);
      const swept = sweep.axes.filter((a) => a.values.length > 1);
      axis = (swept[0] || sweep.axes[0] || {}).path || "point";
      box.replaceChildren("Sweep ", el("a", { href: `/dashboard/sweeps/${sweep.id}` }, sweep.name || sweep.id.slice(0, 8)),
        sweep.preset ? el("span", {}, " of preset ", el("code", {}, sweep.preset)) : "",
        ` · ${sweep.points} points × ${sweep.replications} replications · `,
        el("a", { href: `/dashboard/regions?sweep_id=${sweep.id}` }, "on the region map"));
      document.getElementById("title").textContent = `Comparison: sweep ${sweep.name || sweep.id.slice(0, 8)}`;
    } else {
      const run = await api(`/v1/runs/${config.run_id}`);
      box.replaceChildren("Run ", el("a", { href: `/dashboard/runs/${run.id}` }, run.id.slice(0, 8)), ` · variants ${run.variants.join(", ")}`);
      document.getElementById("title").textContent = `Comparison: run ${run.id.slice(0, 8)}`;
    }
  }

  // A category axis (variants) in the sweep's order of its values.
  function axisLayout(numeric) {
    const values = ((sweep ? sweep.axes : []).find((a) => a.path === axis) || {}).values || [];
    return numeric ? { type: "linear" } : { type: "category", categoryorder: "array", categoryarray: values.map(coord) };
  }
  function axisOrder() { return ((sweep ? sweep.axes : []).find((a) => a.path === axis) || {}).values; }

  function others(row) { return (sweep ? sweep.axes : []).map((a) => a.path).filter((p) => p !== axis).map((p) => `${t.describe(p).text} = ${fmt(row[p])}`); }

  // The model rows the plot shows: each flow's own model (falling back to all where a flow's
  // variant has no model of its own), all, or one model.
  function chosen(rows) {
    const filter = document.getElementById("model-filter").value;
    if (filter === "all") return rows;
    if (filter !== "own") return rows.filter((r) => r.model === filter);
    const own = new Set(rows.filter((r) => r.model === r.variant).map((r) => r.flow));
    return rows.filter((r) => r.model === r.variant || !own.has(r.flow));
  }

  async function models() {
    const url = `/v1/comparisons/models?${t.qs(subject)}`;
    const body = await api(url);
    const select = document.getElementById("model-filter");
    select.append(...[...new Set(body.rows.filter((r) => r.model).map((r) => r.model))].map((m) => el("option", { value: m }, m)));
    if (!axis) select.value = "all";
    select.addEventListener("change", () => drawModels(body.rows).catch(fatal));
    await drawModels(body.rows);
    downloads(document.getElementById("models-downloads"), "model vs simulation", url, `comparison-models`);
    table(document.getElementById("models-table"), body.rows, [
      "point", ...(sweep ? sweep.axes.map((a) => a.path) : []), { name: "flow", text: true },
      { name: "model", text: true, value: (r) => r.model || "none (see note)" },
      "p", "m", "rtt_s", "rto_s", "sim_pkts_per_rtt", "sim_ci_low", "sim_ci_high", "model_pkts_per_rtt",
      { name: "error %", value: (r) => pct(r.error) }, { name: "note", text: true },
    ], { id: "models-table-el" });
    return body.rows;
  }

  // A flow no model describes (BBR, Vegas) has one row with a null model and its reason in the
  // note: the table shows it, the error plot has nothing to draw for it.
  async function drawModels(all) {
    const rows = chosen(all).filter((r) => r.model);
    let traces;
    let layout;
    if (sweep) {
      const groups = groupBy(rows, (r) => JSON.stringify([r.flow, r.model, ...others(r)]));
      traces = [...groups.values()].map((g, i) => {
        g.sort(byAxis(axis, axisOrder()));
        return {
          type: "scatter", mode: "lines+markers", name: [`${g[0].flow}: ${g[0].model}`, ...others(g[0])].join(" · "),
          x: g.map((r) => coord(r[axis])), y: g.map((r) => pct(r.error)),
          text: g.map((r) => r.note || ""), hovertemplate: "%{x}: %{y:.4~g} %<br>%{text}<extra>%{fullData.name}</extra>",
          meta: { kind: "model_error", flow: g[0].flow, model: g[0].model, points: g.map((r) => r.point) },
          line: { color: COLORS[i % COLORS.length], dash: g[0].model === g[0].variant ? "solid" : "dot" },
        };
      });
      const numeric = rows.every((r) => typeof r[axis] === "number");
      layout = { xaxis: { title: { text: label(axis) }, ...axisLayout(numeric) } };
    } else {
      const groups = groupBy(rows, (r) => r.model);
      traces = [...groups.values()].map((g, i) => ({
        type: "bar", name: g[0].model, x: g.map((r) => r.flow), y: g.map((r) => pct(r.error)),
        meta: { kind: "model_error", model: g[0].model, flows: g.map((r) => r.flow) },
        marker: { color: COLORS[i % COLORS.length] },
      }));
      layout = { barmode: "group", xaxis: { title: { text: "flow" } } };
    }
    await plot("plot-model-error", traces, { ...layout, yaxis: { title: { text: "model error |sim − model| / sim (%)" }, rangemode: "tozero" } },
      { name: `comparison-${(config.sweep_id || config.run_id).slice(0, 8)}-model-error`, logs: sweep ? ["y"] : [] });
  }

  async function ratios(flows) {
    const card = document.getElementById("ratios-card");
    if (!sweep || flows.length < 2) return;
    card.hidden = false;
    const metric = document.getElementById("ratio-metric");
    const a = document.getElementById("flow-a");
    const b = document.getElementById("flow-b");
    metric.replaceChildren(...config.metrics.map((m) => el("option", { value: m, selected: m === config.metric }, label(m))));
    a.replaceChildren(...flows.map((f, i) => el("option", { value: f, selected: i === 0 }, f)));
    b.replaceChildren(...flows.map((f, i) => el("option", { value: f, selected: i === 1 }, f)));
    const draw = t.latestOnly(async (current) => {
      const url = `/v1/comparisons/ratios?${t.qs({ sweep_id: sweep.id, metric: metric.value, flow_a: a.value, flow_b: b.value })}`;
      const body = await api(url);
      if (!current()) return;
      const rows = body.rows;
      const groups = groupBy(rows, (r) => JSON.stringify(others(r)));
      const traces = [...groups.values()].map((g) => {
        g.sort(byAxis(axis, axisOrder()));
        const has = (r) => r.ratio !== null && r.ratio_ci_low !== null && r.ratio_ci_high !== null;
        return {
          type: "scatter", mode: "lines+markers", name: [`${b.value} / ${a.value}`, ...others(g[0])].join(" · "),
          x: g.map((r) => coord(r[axis])), y: g.map((r) => r.ratio),
          error_y: { type: "data", symmetric: false, array: g.map((r) => (has(r) ? r.ratio_ci_high - r.ratio : null)),
                     arrayminus: g.map((r) => (has(r) ? r.ratio - r.ratio_ci_low : null)) },
          marker: { size: 11, color: g.map((r) => VERDICT_COLORS[r.verdict] || "#000"), line: { width: 1, color: "#333" } },
          line: { color: "#999", width: 1 },
          text: g.map((r) => r.verdict + (r.note ? ` (${r.note})` : "")),
          hovertemplate: "%{x}: ratio %{y:.4~g}<br>%{text}<extra></extra>",
          meta: { kind: "ratio", points: g.map((r) => r.point), verdicts: g.map((r) => r.verdict) },
        };
      });
      const numeric = rows.every((r) => typeof r[axis] === "number");
      await plot("plot-ratios", traces, {
        xaxis: { title: { text: label(axis) }, ...axisLayout(numeric) },
        yaxis: { title: { text: `${t.describe(metric.value).text}: ${b.value} / ${a.value} (ratio, 95 % CI)` } },
        shapes: [{ type: "line", xref: "paper", x0: 0, x1: 1, y0: 1, y1: 1, line: { dash: "dot", color: "#555", width: 1 } }],
        showlegend: false,
        annotations: [{ xref: "paper", yref: "paper", x: 0, y: 1.08, showarrow: false, align: "left",
          text: `<span style="color:${VERDICT_COLORS.a_better}">● ${a.value} better</span>   <span style="color:${VERDICT_COLORS.b_better}">● ${b.value} better</span>   <span style="color:${VERDICT_COLORS.no_significant_difference}">● no significant difference</span>` }],
      }, { name: `comparison-${sweep.id.slice(0, 8)}-ratio-${metric.value}` });
      if (!current()) return;
      downloads(document.getElementById("ratios-downloads"), "the ratios", url, "comparison-ratios");
      table(document.getElementById("ratios-table"), rows, [
        "point", ...sweep.axes.map((x) => x.path), "pairs", "mean_a", "mean_b", "ratio", "ratio_ci_low", "ratio_ci_high",
        "diff", "diff_ci_low", "diff_ci_high", { name: "verdict", text: true, class: "verdict" }, { name: "note", text: true },
      ], { id: "ratios-table-el", rowClass: (r) => r.verdict });
    });
    const redraw = () => draw().catch(fatal);
    [metric, a, b].forEach((s) => s.addEventListener("change", redraw));
    await draw();
  }

  // Whether the paper comparison applies: the preset has published numbers against an axis
  // the sweep varies (a Table's column, or m for Fig. 2's regions).
  function comparable(preset) {
    const published = preset && preset.published;
    if (!published || !sweep) return false;
    const paths = sweep.axes.map((x) => x.path);
    const columns = (published.tables || []).flatMap((tbl) => tbl.columns.map((c) => c.name));
    return paths.some((p) => columns.includes(p) || columns.includes(p.split(".").pop()))
      || (published.values && "m_range" in published.values && paths.some((p) => p.endsWith("loss.m")));
  }

  function summaryRows(summary) {
    const rows = [];
    if (summary.paper && summary.simulated) {
      for (const [key, value] of Object.entries(summary.paper)) {
        rows.push({ quantity: key, paper: value, ours: summary.simulated.map((s) => s[key]).filter((v) => v !== undefined) });
      }
      const crossover = summary.model_crossover && summary.model_crossover.measured_p;
      if (crossover) rows.push({ quantity: "model m_t at our measured p, R, RTO", paper: summary.paper.analytic_crossover_m_t, ours: crossover.m_t });
    } else {
      for (const [key, value] of Object.entries(summary)) {
        if (!key.startsWith("paper_") || key === "paper_stated") continue;
        const ours = summary["our_" + key.slice(6)];
        if (ours !== undefined) rows.push({ quantity: key.slice(6), paper: value, ours });
      }
    }
    // One simulated group: its value; several (other axes held): the list; none: nothing.
    return rows.map((r) => ({ ...r, ours: !Array.isArray(r.ours) ? r.ours : r.ours.length === 0 ? null : r.ours.length === 1 ? r.ours[0] : r.ours }));
  }

  async function paper() {
    if (!sweep || !sweep.preset) return;
    const preset = await api(`/v1/presets/${encodeURIComponent(sweep.preset)}`);
    if (!comparable(preset)) return;
    const card = document.getElementById("paper-card");
    const url = `/v1/comparisons/paper?${t.qs({ sweep_id: sweep.id })}`;
    let body;
    try {
      body = await api(url);
    } catch (e) {
      if (e.status !== 409) throw e;
      card.hidden = false;
      document.getElementById("paper-findings").replaceChildren(el("p", { class: "muted" }, fmt(e.detail)));
      return;
    }
    card.hidden = false;
    const s = body.summary || {};
    const findings = document.getElementById("paper-findings");
    findings.replaceChildren(
      el("p", { class: "muted" }, body.reference || "", s.reference ? ` — ${s.reference}` : ""),
      s.paper_stated ? el("p", {}, "The paper: ", s.paper_stated) : "",
      el("div", { class: "table-wrap", id: "paper-summary" }));
    table(document.getElementById("paper-summary"), summaryRows(s), [{ name: "quantity", text: true }, { name: "paper", text: true }, { name: "ours", text: true }], { id: "paper-summary-el" });
    for (const note of [...(s.simulated || []).map((x) => x.note), s.model_crossover && s.model_crossover.note].filter(Boolean)) {
      findings.append(el("p", { class: "muted" }, note));
    }
    downloads(document.getElementById("paper-downloads"), "the comparison with the paper", url, "comparison-paper");
    const columns = body.rows.length ? Object.keys(body.rows[0]) : [];
    table(document.getElementById("paper-table"), body.rows, columns.map((c) => ({ name: c, text: typeof body.rows[0][c] === "string", class: c === "verdict" ? "verdict" : null })),
      { id: "paper-table-el", rowClass: (r) => r.verdict || null });
  }

  try {
    await describe();
    const rows = await models();
    const flows = [...new Set(rows.map((r) => r.flow))];
    await Promise.all([ratios(flows), paper()]);
    ready();
  } catch (e) {
    fatal(e);
  }
})();
