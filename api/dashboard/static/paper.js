// A paper's reproduction (GET /v1/reproductions/{paper}): its setup, a button that creates the
// sweeps (POST /v1/reproductions/{paper}), their progress, the conclusions with ✓/◐/✗ and the
// reason, and each table of ours beside the paper's (GET …/tables/{key}) with its plot and downloads.
"use strict";
(async function () {
  const { config, api, el, table, downloads, message, progress, badge, plot, when, label, ready, fatal } = window.tcplab;
  const base = `/v1/reproductions/${config.paper}`;
  const MARK = { agree: "✓", partly: "◐", disagree: "✗", no_data: "?", not_run: "…" };
  let timer = null;

  function header(body) {
    document.getElementById("title").textContent = body.kind === "study" ? `Study: ${body.title}` : `Paper ${body.paper}: ${body.title}`;
    if (body.kind === "study") {
      document.getElementById("conclusions-heading").textContent = "The sources' claims, and whether our results agree";
      document.getElementById("tables-heading").textContent = "Our results";
    }
    document.getElementById("citation").textContent = body.citation;
    document.getElementById("setup").textContent = body.setup;
    document.getElementById("validation").textContent = body.validation;
    document.getElementById("presets").replaceChildren(...body.presets.flatMap((p, i) =>
      [i ? ", " : "", el("a", { href: `/v1/presets/${p}`, class: "preset" }, p)]));
  }

  function state(body) {
    const r = body.reproduction;
    const line = document.getElementById("reproduction-status");
    const box = document.getElementById("progress");
    if (!r) {
      line.replaceChildren("Not reproduced yet.");
      box.replaceChildren();
    } else {
      line.replaceChildren(badge(r.status), ` reproduction ${r.batch} of ${when(r.created_at)}: `,
        ...r.sweeps.flatMap((s, i) => [i ? ", " : "", el("a", { href: `/dashboard/sweeps/${s.sweep_id}` }, s.experiment)]));
      if (r.status === "running") progress(box, r.runs_done, r.runs); else box.replaceChildren();
    }
    document.getElementById("sources").textContent = body.sources.length
      ? "Judged from: " + body.sources.map((s) => `${s.experiment} (sweep ${s.sweep_id.slice(0, 8)}${
        Object.keys(s.overrides).length ? ", overrides " + JSON.stringify(s.overrides) : ""})`).join("; ")
      : "";
  }

  function conclusions(body) {
    const t = table(document.getElementById("conclusions"), body.rows, [
      { name: "verdict", label: "", value: (r) => MARK[r.verdict] || r.verdict, class: "mark" },
      { name: "conclusion", text: true },
      { name: "where", text: true },
      { name: "experiment", text: true },
      { name: "ours", text: true, label: "what we measured" },
      { name: "reason", text: true, label: "why not, where we found out" },
    ], { id: "conclusions-table", rowClass: (r) => `verdict-${r.verdict}` });
    t.querySelectorAll("tbody tr").forEach((tr, i) => {
      tr.dataset.id = body.rows[i].id;
      tr.dataset.verdict = body.rows[i].verdict;
      tr.cells[0].title = body.rows[i].verdict;
    });
    downloads(document.getElementById("conclusions-downloads"), "the conclusions", base, `reproduction-${config.label}-conclusions`);
  }

  // A column's 95 % interval as an error bar, from the table's own columns beside it:
  // `<y>_half_width` (±), `<y>_ci_low` / `<y>_ci_high`, or those of its stem (`sbs_mean` →
  // `sbs_ci_low`, `sim_pkts_per_rtt` → `sim_ci_low`); null when the table has none.
  function errorBars(y, rows) {
    const has = (c) => rows.some((r) => typeof r[c] === "number");
    const stems = [y, y.replace(/_mean$/, ""), y.split("_")[0]];
    const half = [`${y}_half_width`, `${y}_hw`].find(has);
    const span = half ? { array: rows.map((r) => r[half]), symmetric: true, column: half }
      : stems.map((s) => [`${s}_ci_low`, `${s}_ci_high`]).filter(([lo, hi]) => has(lo) && has(hi)).map(([lo, hi]) => ({
        symmetric: false, column: `${lo}, ${hi}`,
        array: rows.map((r) => (typeof r[hi] === "number" && typeof r[y] === "number" ? r[hi] - r[y] : null)),
        arrayminus: rows.map((r) => (typeof r[lo] === "number" && typeof r[y] === "number" ? r[y] - r[lo] : null)),
      }))[0];
    if (!span) return null;
    const { column, ...bars } = span;
    return { error_y: { type: "data", visible: true, thickness: 1.2, width: 4, ...bars }, column };
  }

  // A curve per y column (and per series), named by the columns' labels: "ours SBS" beside a
  // paper's curves, "SBS" on a study's page (nothing of a paper to tell ours from).
  function traces(spec, rows, columnLabel, prefix) {
    const out = [];
    const groups = spec.series ? [...new Set(rows.map((r) => r[spec.series]))] : [null];
    for (const y of spec.y) {
      for (const g of groups) {
        const sel = rows.filter((r) => g === null || r[spec.series] === g);
        const name = [g, spec.y.length > 1 || g === null ? columnLabel(y) : null].filter((x) => x !== null).join(" ");
        const bars = errorBars(y, sel);
        const trace = { name: `${prefix}${name}`.trim(), x: sel.map((r) => r[spec.x]), y: sel.map((r) => r[y]),
          meta: { kind: "ours", column: y, errors: bars && bars.column }, ...(bars ? { error_y: bars.error_y } : {}) };
        out.push(spec.kind === "bars" ? { type: "bar", ...trace }
          : { type: "scatter", mode: spec.kind === "points" ? "markers" : "lines+markers", ...trace });
      }
    }
    if (spec.paper_y) {
      const sel = rows.filter((r) => r[spec.paper_y] !== null && r[spec.paper_y] !== undefined);
      out.push(spec.kind === "bars"
        ? { type: "bar", name: "paper", x: sel.map((r) => r[spec.x]), y: sel.map((r) => r[spec.paper_y]), meta: { kind: "paper", column: spec.paper_y } }
        : { type: "scatter", mode: "markers", name: "paper", x: sel.map((r) => r[spec.x]), y: sel.map((r) => r[spec.paper_y]),
          marker: { symbol: "diamond", size: 10 }, meta: { kind: "paper", column: spec.paper_y } });
    }
    return out;
  }

  async function oneTable(container, meta, kind) {
    const url = `${base}/tables/${meta.key}`;
    const plotId = `plot-${meta.key}`;
    const box = el("div", { class: "table-wrap" });
    const links = el("div", { class: "downloads" });
    const section = el("section", { class: "reproduction-table", "data-key": meta.key },
      el("h3", {}, meta.title), el("p", { class: "muted" }, meta.caption),
      meta.plot ? el("div", { id: plotId, class: "plot" }) : null,
      meta.plot && meta.plot.note ? el("p", { class: "muted" }, meta.plot.note) : null, box, links);
    container.append(section);
    const data = await api(url);
    table(box, data.rows, meta.columns.map((c) => ({ name: c.name, label: c.unit ? `${c.label} (${c.unit})` : c.label,
      text: typeof (data.rows[0] || {})[c.name] === "string" })), { id: `table-${meta.key}` });
    downloads(links, meta.title, url, `reproduction-${config.label}-${meta.key}`);
    if (meta.plot) {
      const drawn = traces(meta.plot, data.rows, (c) => (meta.columns.find((x) => x.name === c) || {}).label || c,
        kind === "study" ? "" : "ours ");
      // Points (Pantheon's view): delay on a log axis growing to the left, better up and right.
      const points = meta.plot.kind === "points";
      await plot(plotId, drawn, {
        barmode: "group",
        xaxis: { title: { text: meta.plot.x_label || label(meta.plot.x) }, ...(points ? { type: "log", autorange: "reversed" } : {}) },
        yaxis: { title: { text: (meta.plot.y_label || label(meta.plot.y[0])) + (drawn.some((d) => d.error_y) ? ", 95 % CI" : "") } },
      }, { name: `${config.label}-${meta.key}`, ...(points ? { logs: ["x", "y"] } : {}) });
    }
  }

  async function load() {
    const body = await api(base);
    header(body);
    state(body);
    conclusions(body);
    const container = document.getElementById("tables");
    container.replaceChildren();
    if (!body.tables.length) container.append(el("p", { class: "muted" }, "No finished experiment yet: run the reproduction."));
    for (const meta of body.tables) await oneTable(container, meta, body.kind);
    clearTimeout(timer);
    if (body.status === "running") timer = setTimeout(() => load().catch(fatal), 2000);
    document.body.dataset.status = body.status;
  }

  document.getElementById("reproduce").addEventListener("click", async () => {
    const button = document.getElementById("reproduce");
    button.disabled = true;
    try {
      const started = await api(base, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" }, body: JSON.stringify(config.request || {}) });
      message(`Reproduction ${started.batch}: ${started.created.runs} runs (${started.created.cached} from the cache).`);
      await load();
    } catch (e) {
      fatal(e);
    } finally {
      button.disabled = false;
    }
  });

  try {
    await load();
    ready();
  } catch (e) {
    fatal(e);
  }
})();
