// Sweep: any metric against any axis, one line per flow group (and per value of the other
// axes) with 95 % CI error bars (GET /v1/sweeps/{id}/summary?metric=); model predictions
// (GET /v1/comparisons/models?sweep_id=) and the paper's numbers (GET /v1/presets/{name})
// as toggles; the per-point table; downloads of what is plotted.
"use strict";
(async function () {
  const t = window.tcplab;
  const { config, api, el, table, badge, fmt, coord, label, downloads, message, progress, plot, ready, fatal, groupBy, byAxis } = t;
  const id = config.sweep_id;
  const COLORS = ["#2463eb", "#e4572e", "#17a398", "#8e44ad", "#f39c12", "#34495e", "#c0392b", "#16a085", "#7f8c8d", "#d35400"];
  // Which model-comparison column and which paper table column stand for a flow metric.
  const MODEL_METRICS = { throughput_pkts_per_rtt: "model_pkts_per_rtt" };
  const PAPER_COLUMNS = {
    throughput_pkts_per_rtt: [["sim_pkts_per_rtt", "simulated"], ["model_pkts_per_rtt", "model"]],
    loss_event_rate: [["loss_event_rate", "loss event rate"]],
    loss_rate: [["loss_rate", "loss rate"]],
  };
  // Rows of the per-point table drawn (a 1,000-point sweep has 2,000: their 26,000 cells took
  // a second to build in Chromium; the plot and the downloads have every row).
  const MAX_TABLE_ROWS = 200;
  // Lines of more points than this are drawn without markers, their CI as a band.
  const BAND_FROM = 200;
  // Published boundaries drawn across an m axis (paper 000 Fig. 2).
  const PAPER_MARKS = [
    ["equality_region_m_below", "paper: equality below m ="],
    ["imp_superior_m_from", "paper: IMP superior from m ="],
    ["analytic_crossover_m_t", "paper: analytic m_t ="],
  ];

  // Requests started when the page opens, beside the sweep's progress, each taken once by
  // the first `fetched` of its URL: the summary of the metric in the address, the preset's
  // published numbers, the models of the variants measured so far (one after the other, as
  // each waited for the one before, they were half of a 50,000-run sweep's page).
  const early = new Map();
  function fetched(url) {
    const pending = early.get(url);
    early.delete(url);
    return pending || api(url);
  }
  function fetchEarly(url) {
    const pending = api(url);
    pending.catch(() => {});  // awaited (and its error raised) by whoever takes it
    early.set(url, pending);
  }
  const summaryUrl = (metric) => `/v1/sweeps/${id}/summary?${t.qs({ metric })}`;
  const modelsUrl = (models) => `/v1/comparisons/models?${t.qs({ sweep_id: id, models })}`;
  const presetUrl = (name) => `/v1/presets/${encodeURIComponent(name)}`;
  // While runs finish the progress is polled every 2 s; the plot (its summary, the model
  // comparison, Plotly) is redrawn at most every REDRAW_MS, or five times its last duration.
  const POLL_MS = 2000;
  const REDRAW_MS = 10000;

  let sweep = null;
  let preset = null;  // the preset's detail, for its published numbers
  let modelRows = null;  // null: not fetched; false: not available
  let modelsFetched = "";  // the models modelRows holds (comma-separated)
  const state = { metric: config.metric, axis: config.axis };

  function statusLine(s) {
    const p = s.progress;
    document.getElementById("title").textContent = `Sweep ${s.name || s.id.slice(0, 8)}`;
    document.getElementById("sweep-status").replaceChildren(
      badge(s.status), " ",
      s.preset ? el("span", {}, "preset ", el("code", {}, s.preset), " · ") : "",
      `${s.points} points × ${s.replications} replications · ${p.succeeded} succeeded, ${p.failed} failed, ${p.cancelled} cancelled of ${p.total} runs · axes `,
      ...s.axes.map((a) => el("code", {}, `${a.path} = ${valuesText(a.values)}`)));
  }

  function valuesText(values) {
    const v = values.map(fmt);
    return v.length > 8 ? `${v.slice(0, 3).join(", ")}, …, ${v[v.length - 1]} (${v.length} values)` : v.join(", ");
  }

  function otherAxes() { return sweep.axes.map((a) => a.path).filter((p) => p !== state.axis); }

  // A line's legend name: its flow, the flow's variant where the line has one variant (along a
  // variant axis each point has its own: the x axis names them), the other axes' values.
  function groupName(rows) {
    const variants = new Set(rows.map((r) => r.variant));
    const variant = variants.size === 1 ? rows[0].variant : null;
    const others = otherAxes()
      .filter((p) => !(p.endsWith(".variant") && rows[0][p] === variant))  // named already
      .map((p) => `${t.describe(p).text} = ${fmt(rows[0][p])}`);
    return [rows[0].flow + (variant && variant !== rows[0].flow ? ` (${variant})` : ""), ...others].join(" · ");
  }

  // The order of the axis's values as the sweep lists them (a variant axis in its own order).
  function axisOrder() { return (sweep.axes.find((a) => a.path === state.axis) || {}).values; }

  function simTraces(rows) {
    const groups = groupBy(rows, (r) => JSON.stringify([r.flow, ...otherAxes().map((p) => r[p])]));
    return [...groups.values()].map((g, i) => {
      g.sort(byAxis(state.axis, axisOrder()));
      const has = (r) => r.ci_high !== null && r.ci_low !== null && r.mean !== null;
      const errors = {
        type: "data", symmetric: false, visible: true, thickness: 1.2, width: 4,
        array: g.map((r) => (has(r) ? r.ci_high - r.mean : null)),
        arrayminus: g.map((r) => (has(r) ? r.mean - r.ci_low : null)),
      };
      return {
        type: "scatter", mode: "lines+markers", name: groupName(g),
        x: g.map((r) => coord(r[state.axis])), y: g.map((r) => r.mean),
        error_y: errors,
        customdata: g.map((r) => [r.point, r.count, r.ci_low, r.ci_high]),
        hovertemplate: "%{x}: %{y:.4~g}<br>95 % CI %{customdata[2]:.4~g} – %{customdata[3]:.4~g}<br>n = %{customdata[1]}<extra>%{fullData.name}</extra>",
        meta: { kind: "sim", flow: g[0].flow, points: g.map((r) => r.point) },
        line: { color: COLORS[i % COLORS.length], width: 2 }, marker: { size: 7 },
        ...(g.length > BAND_FROM ? { mode: "lines", error_y: { ...errors, visible: false } } : {}),
      };
    });
  }

  // A long line's 95 % CI as one shaded band around it rather than an error bar per point
  // (1,000 points: a marker and a bar each were 260 of Plotly's 330 ms in Chromium).
  function bandTraces(sims) {
    return sims.filter((s) => s.x.length > BAND_FROM).map((s) => {
      const keep = s.x.map((_, k) => k).filter((k) => s.error_y.array[k] !== null);
      const high = keep.map((k) => s.y[k] + s.error_y.array[k]);
      const low = keep.map((k) => s.y[k] - s.error_y.arrayminus[k]);
      return {
        type: "scatter", mode: "lines", fill: "toself", name: `${s.name}: 95 % CI`,
        x: [...keep.map((k) => s.x[k]), ...keep.map((k) => s.x[k]).reverse()], y: [...high, ...low.reverse()],
        line: { width: 0, color: s.line.color }, fillcolor: s.line.color, opacity: 0.2,
        hoverinfo: "skip", showlegend: false, meta: { kind: "ci", flow: s.meta.flow },
      };
    });
  }

  function modelTraces(simColors) {
    const column = MODEL_METRICS[state.metric];
    if (!column || !modelRows) return [];
    const choice = document.getElementById("model-choice").value;
    const chosen = modelRows.filter((r) => (choice ? r.model === choice : r.model === r.variant));
    const groups = groupBy(chosen, (r) => JSON.stringify([r.flow, r.model, ...otherAxes().map((p) => r[p])]));
    return [...groups.values()].map((g) => {
      g.sort(byAxis(state.axis, axisOrder()));
      const name = groupName(g);
      return {
        type: "scatter", mode: "lines", name: `model ${g[0].model}: ${name}`,
        x: g.map((r) => coord(r[state.axis])), y: g.map((r) => r[column]),
        meta: { kind: "model", flow: g[0].flow, model: g[0].model, points: g.map((r) => r.point) },
        line: { dash: "dash", width: 2, color: simColors.get(name) || "#555" },
      };
    });
  }

  function publishedTraces(simRows) {
    const published = preset && preset.published;
    if (!published) return [];
    const traces = [];
    const axisName = state.axis.split(".").pop();
    for (const tbl of published.tables || []) {
      const names = tbl.columns.map((c) => c.name);
      const xName = names.includes(state.axis) ? state.axis : names.includes(axisName) ? axisName : null;
      if (!xName) continue;
      for (const [col, label] of PAPER_COLUMNS[state.metric] || []) {
        if (!names.includes(col)) continue;
        traces.push({
          type: "scatter", mode: "markers", name: `paper ${tbl.name}: ${label}`,
          x: tbl.rows.map((r) => r[xName]), y: tbl.rows.map((r) => r[col]),
          marker: { symbol: col.startsWith("model") ? "x" : "diamond-open", size: 9, color: "#111" },
          meta: { kind: "published", table: tbl.name, column: col },
        });
      }
    }
    if (state.axis.endsWith("loss.m")) {
      const ys = simRows.flatMap((r) => [r.ci_high, r.mean]).filter((v) => typeof v === "number");
      const top = ys.length ? Math.max(...ys) * 1.05 : 1;
      for (const [key, label] of PAPER_MARKS) {
        const v = (published.values || {})[key];
        if (typeof v !== "number") continue;
        traces.push({
          type: "scatter", mode: "lines", name: `${label} ${v}`, x: [v, v], y: [0, top],
          line: { dash: "dot", width: 1.5, color: "#555" }, hoverinfo: "name",
          meta: { kind: "published", value: key },
        });
      }
    }
    return traces;
  }

  // The model overlay asks only for the models it draws: each flow's own variant (the
  // default) or the one chosen — not every model at every point (4.4 MB at 1,000 points).
  async function ensureOverlays(rows) {
    if (MODEL_METRICS[state.metric]) {
      const choice = document.getElementById("model-choice").value;
      const wanted = [...new Set([...rows.map((r) => r.variant), choice])].filter((m) => config.models.includes(m)).sort();
      const key = wanted.join(",");
      if (modelRows === null || key !== modelsFetched) {
        modelsFetched = key;
        modelRows = false;
        if (wanted.length) {
          try {
            modelRows = (await fetched(modelsUrl(key))).rows;
          } catch (e) {
            if (e.status !== 404 && e.status !== 409 && e.status !== 422) throw e;
          }
        }
      }
    }
    if (preset === null) {
      preset = sweep.preset ? await fetched(presetUrl(sweep.preset)) : false;
    }
  }

  const draw = t.latestOnly(async (current) => {
    const url = summaryUrl(state.metric);
    const summary = await fetched(url);
    if (!current()) return;
    const rows = summary.rows.filter((r) => r.metric === undefined || r.metric === state.metric);
    await ensureOverlays(rows);
    if (!current()) return;
    const modelBox = document.getElementById("toggle-model");
    const paperBox = document.getElementById("toggle-published");
    const sims = simTraces(rows);
    const colors = new Map(sims.map((s) => [s.name, s.line.color]));
    const models = modelTraces(colors);
    const papers = publishedTraces(rows);
    modelBox.disabled = models.length === 0;
    paperBox.disabled = papers.length === 0;
    const notes = [];
    if (!models.length) notes.push(MODEL_METRICS[state.metric] ? "No model predictions for this sweep." : `Model predictions are in packets per RTT: choose ${label("throughput_pkts_per_rtt")}.`);
    if (!papers.length) notes.push("No published numbers for this metric and axis.");
    document.getElementById("overlay-note").textContent = notes.join(" ");

    const traces = [...bandTraces(sims), ...sims, ...(modelBox.checked ? models : []), ...(paperBox.checked ? papers : [])];
    const numeric = rows.every((r) => typeof r[state.axis] === "number");
    const xaxis = numeric ? { type: "linear" } : { type: "category", categoryorder: "array", categoryarray: (axisOrder() || []).map(coord) };
    await plot("plot-sweep", traces, {
      xaxis: { title: { text: label(state.axis) }, ...xaxis },
      yaxis: { title: { text: label(state.metric, "mean and 95 % CI") }, rangemode: "tozero" },
    }, { name: `sweep-${id.slice(0, 8)}-${state.metric}-vs-${state.axis.split(".").pop()}`, logs: numeric ? ["x", "y"] : ["y"] });
    if (!current()) return;
    downloads(document.getElementById("summary-downloads"), "the plotted summary", url, `sweep-${id}-${state.metric}`);
    const modelDownloads = document.getElementById("model-downloads");
    if (models.length && modelBox.checked) downloads(modelDownloads, "the model predictions", `/v1/comparisons/models?sweep_id=${id}`, `sweep-${id}-models`);
    else modelDownloads.replaceChildren();

    document.getElementById("table-card").hidden = false;
    const sorted = [...rows].sort((a, b) => (a.point - b.point) || String(a.flow).localeCompare(String(b.flow)));
    const stopping = rows.some((r) => "stop_reason" in r);
    table(document.getElementById("points"), sorted.slice(0, MAX_TABLE_ROWS), [
      "point", ...sweep.axes.map((a) => ({ name: a.path })), { name: "flow", text: true }, { name: "variant", text: true },
      "count", "mean", "std", "ci_low", "ci_high", "half_width", ...(stopping ? [{ name: "stop_reason", text: true }] : []),
    ], { id: "points-table", empty: "No succeeded runs yet." });
    if (sorted.length > MAX_TABLE_ROWS) {
      document.getElementById("points").append(el("p", { class: "muted", id: "points-cut" },
        `The first ${fmt(MAX_TABLE_ROWS)} of ${fmt(sorted.length)} rows; the downloads above have them all.`));
    }
    document.getElementById("stop-note").textContent = stopping ? stopNote(rows) : "";
    if (sweep.stopping) document.getElementById("stop-note").prepend(el("b", { id: "stop-outcome" }, sweep.stopping.message + ". "));
    const q = new URLSearchParams(location.search);
    q.set("metric", state.metric); q.set("axis", state.axis);
    history.replaceState(null, "", `${location.pathname}?${q}`);
  });

  // The stopping rule's verdicts, one per point: "target met" or why it stopped short of it.
  function stopNote(rows) {
    const byPoint = new Map(rows.map((r) => [r.point, r.stop_reason]));
    const counts = new Map();
    for (const reason of byPoint.values()) counts.set(reason, (counts.get(reason) || 0) + 1);
    const parts = [...counts].map(([reason, n]) => `${n} ${n === 1 ? "point" : "points"}: ${reason === null ? "still growing" : reason}`);
    const capped = [...counts.keys()].some((reason) => reason && reason.startsWith("capped:"));
    return `Stopping rule: ${parts.join(" · ")}.` + (capped ? " A capped point stopped at a limit (its owner's quota of queued runs, the per-sweep cap or the server's queue); extending the sweep resumes it." : "");
  }

  function setUpControls() {
    const metric = document.getElementById("metric");
    metric.replaceChildren(...config.metrics.map((m) => el("option", { value: m, selected: m === state.metric }, label(m))));
    // The swept axes first; a sweep of replications alone is drawn against its one point.
    const paths = [...sweep.axes].sort((a, b) => (b.values.length > 1) - (a.values.length > 1)).map((a) => a.path);
    if (!paths.length) paths.push("point");
    if (!state.axis || !paths.includes(state.axis)) state.axis = paths[0];
    const axis = document.getElementById("axis");
    axis.replaceChildren(...paths.map((p) => el("option", { value: p, selected: p === state.axis }, `${label(p)} · ${p}`)));
    const redraw = () => draw().catch(fatal);
    metric.addEventListener("change", () => { state.metric = metric.value; redraw(); });
    axis.addEventListener("change", () => { state.axis = axis.value; redraw(); });
    const choice = document.getElementById("model-choice");
    choice.replaceChildren(choice.options[0], ...config.models.map((m) => el("option", { value: m }, m)));
    document.getElementById("toggle-model").checked = true;
    document.getElementById("toggle-published").checked = true;
    document.getElementById("toggle-model").addEventListener("change", redraw);
    document.getElementById("model-choice").addEventListener("change", redraw);
    document.getElementById("toggle-published").addEventListener("change", redraw);
    document.getElementById("comparison-link").href = `/dashboard/comparisons?sweep_id=${id}`;
    document.getElementById("regions-link").href = `/dashboard/regions?sweep_id=${id}`;
    document.getElementById("compare-link").href = `/dashboard/compare?a=${id}`;
  }

  // Pantheon's throughput-delay plot from the sweep's tidy table (GET /v1/sweeps/{id}/table):
  // per run and TCP flow group, x = the bottleneck's p95 queueing delay (ms), y = the group's
  // goodput per flow (Mb/s); a large marker per variant and point of the other axes at the means.
  // The table is about 2 kB a row: a sweep of more runs than this is left to the SDK.
  const PANTHEON_MAX_RUNS = 5000;
  async function drawPantheon() {
    const card = document.getElementById("pantheon-card");
    const note = document.getElementById("pantheon-note");
    if (sweep.progress.succeeded > PANTHEON_MAX_RUNS) {
      card.hidden = false;
      note.textContent = `${fmt(sweep.progress.succeeded)} runs: too many to draw here; the SDK's sweep_table() or `
        + `GET /v1/sweeps/${id}/table has them.`;
      return;
    }
    const body = await api(`/v1/sweeps/${id}/table`);
    const delay = new Map(body.rows.filter((r) => r.level === "link" && r.name === "bottleneck" && r.p95_queue_delay_s !== null)
      .map((r) => [r.run_id, r.p95_queue_delay_s * 1000]));
    const flows = body.rows.filter((r) => r.level === "flow" && r.type === "tcp" && r.goodput_bps !== null && delay.has(r.run_id));
    card.hidden = !flows.length;  // a graph topology (no "bottleneck"), or results of a core before 0.4.0
    if (!flows.length) return;
    const others = body.axes.filter((a) => !a.path.endsWith(".variant") && a.values.length > 1).map((a) => a.column);
    const key = (r) => [r.variant || r.name, ...others.map((c) => `${t.describe(body.axes.find((a) => a.column === c).path).text} = ${fmt(r[c])}`)].join(" · ");
    const variants = [...new Set(flows.map((r) => r.variant || r.name))];
    const color = (r) => COLORS[variants.indexOf(r.variant || r.name) % COLORS.length];
    // The other axes' values by marker shape (the variant by colour).
    const SYMBOLS = ["circle", "square", "diamond", "triangle-up", "cross", "x", "star", "hexagon"];
    const place = (r) => JSON.stringify(others.map((c) => r[c]));
    const places = [...new Set(flows.map(place))];
    const symbol = (r) => SYMBOLS[places.indexOf(place(r)) % SYMBOLS.length];
    const groups = groupBy(flows, key);
    const traces = [];
    for (const [name, g] of groups) {
      const x = g.map((r) => delay.get(r.run_id)), y = g.map((r) => r.goodput_bps / 1e6);
      traces.push({ type: "scatter", mode: "markers", name, legendgroup: name, showlegend: false, x, y,
        marker: { color: color(g[0]), symbol: symbol(g[0]), size: 6, opacity: 0.45 }, meta: { kind: "run", group: name, runs: g.map((r) => r.run_id) },
        hovertemplate: "p95 delay %{x:.4~g} ms<br>%{y:.4~g} Mb/s<extra>%{fullData.name}</extra>" });
      traces.push({ type: "scatter", mode: "markers+text", name, legendgroup: name, x: [t.mean(x)], y: [t.mean(y)],
        text: [g[0].variant || g[0].name], textposition: "top center",
        marker: { color: color(g[0]), symbol: symbol(g[0]), size: 14, line: { color: "#fff", width: 1.5 } }, meta: { kind: "mean", group: name },
        hovertemplate: "mean p95 delay %{x:.4~g} ms<br>mean %{y:.4~g} Mb/s<extra>%{fullData.name}</extra>" });
    }
    await plot("plot-pantheon", traces, {
      xaxis: { title: { text: "bottleneck queueing delay, 95th percentile (ms)" }, autorange: "reversed" },
      yaxis: { title: { text: "goodput per flow (Mb/s)" }, rangemode: "tozero" },
    }, { name: `sweep-${id.slice(0, 8)}-throughput-vs-delay`, logs: ["x"] });
    note.textContent = `${fmt(flows.length)} flow groups of ${fmt(delay.size)} runs.`;
    downloads(document.getElementById("pantheon-downloads"), "the sweep's tidy table", `/v1/sweeps/${id}/table`, `sweep-${id}-table`);
  }

  // Polls the progress while runs are queued or running, redrawing as more succeed (not more
  // often than REDRAW_MS); draws once when done.
  let controlsReady = false;
  let drawnFor = -1;  // the succeeded count the plot was drawn for
  let drawn = { at: 0, took: 0 };  // when the plot was last drawn, and how long that took (ms)
  async function refresh() {
    try {
      sweep = await api(`/v1/sweeps/${id}`);
      statusLine(sweep);
      const p = sweep.progress;
      const running = sweep.status === "queued" || sweep.status === "running";
      const box = document.getElementById("progress");
      if (running) {
        message(`This sweep is ${sweep.status}: ${p.succeeded ? "the plots show the runs finished so far" : "the plots appear as its runs finish"}.`);
        progress(box, p.succeeded + p.failed + p.cancelled, p.total);
      } else {
        message(sweep.status === "cancelled" ? "This sweep was cancelled: the plots show the runs that finished." : "");
        box.replaceChildren();
      }
      if (p.succeeded > 0 || !running) {
        document.getElementById("plot-card").hidden = false;
        document.getElementById("links-card").hidden = false;
        if (!controlsReady) { setUpControls(); controlsReady = true; }
        const due = performance.now() - drawn.at >= Math.max(REDRAW_MS, 5 * drawn.took);
        if ((p.succeeded !== drawnFor && (drawnFor < 0 || due)) || !running) {
          modelRows = null;  // the models' inputs are measured: more runs, new predictions
          const started = performance.now();
          await draw();
          drawn = { at: performance.now(), took: performance.now() - started };
          drawnFor = p.succeeded;
          if (!running) await drawPantheon();
        }
      }
      early.clear();  // what the page asked for at its opening is only good for its first draw
      if (running) setTimeout(refresh, POLL_MS);
      ready();
    } catch (e) {
      fatal(e);
    }
  }
  fetchEarly(summaryUrl(state.metric));
  if (config.preset) fetchEarly(presetUrl(config.preset));
  if (MODEL_METRICS[state.metric]) {
    // As ensureOverlays will ask (no model chosen yet): each measured variant's own model.
    const wanted = config.variants.filter((m) => config.models.includes(m)).sort();
    if (wanted.length) fetchEarly(modelsUrl(wanted.join(",")));
  }
  refresh();
})();
