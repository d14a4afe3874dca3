// Run: status, its scenario and sweep (GET /v1/runs/{id}/scenario) with "run again with
// traces" (POST /v1/runs), per-flow table (GET /v1/runs/{id}/flows), cwnd / ssthresh per flow
// and the queue (GET /v1/runs/{id}/traces?points=…: at most two rows per pixel, the min and
// max of each bucket, fetched again for the range on zoom), with their downloads (every sample).
"use strict";
(async function () {
  const { config, api, qs, el, table, badge, fmt, label, downloads, message, plot, ready, fatal } = window.tcplab;
  const id = config.run_id;
  const COLORS = ["#2463eb", "#e4572e", "#17a398", "#8e44ad", "#f39c12", "#34495e", "#c0392b", "#16a085"];

  function statusLine(run) {
    document.getElementById("run-status").replaceChildren(
      badge(run.status), " ",
      run.preset ? el("span", {}, "preset ", el("code", {}, run.preset), " · ") : "",
      `variants ${run.variants.join(", ")} · seed ${run.seed}`,
      run.core_wall_s !== null ? ` · core ${fmt(run.core_wall_s)} s, ${fmt(run.events)} events` : "",
      run.cached ? " · answered from the cache" : "");
  }

  // Flows drawn one panel each (their own y range: one flow's spike to 2,000 packets no longer
  // flattens the others); beyond this many, one panel for all.
  const MAX_PANELS = 8;
  const PANEL_PX = 210;

  // The scenario (collapsible, as JSON), the sweep the run belongs to, "run again with traces".
  async function showScenario(run) {
    const body = await api(`/v1/runs/${id}/scenario`);
    const sweep = document.getElementById("sweep-link");
    if (body.sweep_id) {
      sweep.hidden = false;
      sweep.replaceChildren("Part of sweep ", el("a", { href: `/dashboard/sweeps/${body.sweep_id}`, id: "sweep-href" }, body.sweep_id.slice(0, 8)),
        ` · point ${fmt(body.sweep_point)}, replication ${fmt(body.replication)}`);
    }
    document.getElementById("scenario-json").textContent = scenarioText(body.scenario, 2);
    document.getElementById("scenario-card").hidden = false;
    const traced = Boolean(body.scenario.outputs && body.scenario.outputs.trace_interval_s);
    const button = document.getElementById("rerun-traces");
    button.hidden = traced || run.status === "queued" || run.status === "running";
    button.onclick = () => runAgainWithTraces(body.scenario).catch(fatal);
  }

  // JSON of a scenario: a 64-bit seed came as its exact text (common.js `parse`), written
  // back as the number it is.
  function scenarioText(value, indent) {
    return JSON.stringify(value, null, indent).replace(/"seed": ?"(\d+)"/g, (m, digits) => m.replace(`"${digits}"`, digits));
  }

  // The same scenario with cwnd, ssthresh, queue, delivery-rate and one-way-delay traces, about 5,000 samples at a round
  // interval, within the core's max_trace_points (series × samples); then its page.
  async function runAgainWithTraces(scenario) {
    const button = document.getElementById("rerun-traces");
    button.disabled = true;
    const flows = scenario.flows.reduce((n, f) => n + (f.count || 1), 0);
    const links = ((scenario.topology.graph || {}).links || [null]).length;
    const series = 4 * flows + links;
    const step = scenario.duration_s / 5000;
    const power = 10 ** Math.floor(Math.log10(step));
    let interval = Math.max(0.001, ([1, 2, 5, 10].find((k) => k * power >= step) || 10) * power);
    while ((Math.floor(scenario.duration_s / interval) + 1) * series > 10_000_000) interval *= 2;
    const samples = Math.floor(scenario.duration_s / interval) + 1;
    const outputs = { ...(scenario.outputs || {}), trace_interval_s: Number(interval.toPrecision(3)), trace: ["cwnd", "ssthresh", "queue", "throughput", "delay"],
      max_trace_points: Math.min(10_000_000, Math.max((scenario.outputs || {}).max_trace_points || 0, samples * series)) };
    try {
      const run = await api("/v1/runs", { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: scenarioText({ scenario: { ...scenario, outputs } }) });
      location.assign(`/dashboard/runs/${run.id}`);
    } finally {
      button.disabled = false;
    }
  }

  // Rows per plot: two per pixel column (a bucket's min and max), within the API's bounds.
  function points() {
    const width = document.getElementById("plot-cwnd").clientWidth || 1000;
    return Math.min(20000, Math.max(1000, 2 * Math.round(width)));
  }

  // The traces of the time range (all when null), downsampled by the API for this width.
  function tracesOf(range) {
    const params = { points: points() };
    if (range) Object.assign(params, { from_s: range[0], to_s: range[1] });
    return api(`/v1/runs/${id}/traces?${qs(params)}`);
  }

  function describe(traces) {
    const note = document.getElementById("traces-note");
    note.textContent = traces.downsampled
      ? `${fmt(traces.count)} samples drawn as the minimum and maximum of ${fmt(traces.downsampled.buckets)} buckets `
        + "(zoom in for every sample; the downloads hold every sample)."
      : `Every sample (${fmt(traces.count)}) is drawn.`;
    note.dataset.downsampled = traces.downsampled ? "1" : "0";
  }

  // On zoom, the range's samples at this width; on reset, the whole run again.
  function follow(plotId) {
    const div = document.getElementById(plotId);
    let latest = 0;
    div.on("plotly_relayout", async (change) => {
      const range = change["xaxis.range[0]"] !== undefined ? [change["xaxis.range[0]"], change["xaxis.range[1]"]]
        : Array.isArray(change["xaxis.range"]) ? change["xaxis.range"] : null;
      if (!range && !change["xaxis.autorange"]) return;
      const request = ++latest;
      div.dataset.state = "drawing";
      try {
        const fresh = await tracesOf(range);
        if (request !== latest) return;
        const t = fresh.rows.map((r) => r.time_s);
        const columns = div.data.map((d) => d.meta.column);
        await Plotly.restyle(div, { x: columns.map(() => t), y: columns.map((c) => fresh.rows.map((r) => r[c])) });
        if (plotId === "plot-cwnd") describe(fresh);
        div.dataset.state = "ready";
      } catch (e) {
        fatal(e);
      }
    });
  }

  async function showResult() {
    const [result, flows, traces] = await Promise.all([
      api(`/v1/runs/${id}/result`),
      api(`/v1/runs/${id}/flows`),
      tracesOf(null),
    ]);
    document.getElementById("flows-card").hidden = false;
    document.getElementById("links-card").hidden = false;
    document.getElementById("comparison-link").href = `/dashboard/comparisons?run_id=${id}`;
    document.getElementById("result-link").href = `/v1/runs/${id}/result`;
    document.getElementById("run-status").append(
      ` · measured ${fmt(result.measured_from_s)}–${fmt(result.measured_to_s)} s`);
    downloads(document.getElementById("flows-downloads"), "the flows", `/v1/runs/${id}/flows`, `run-${id}-flows`);
    table(document.getElementById("flows"), flows.rows, [
      { name: "name", text: true }, { name: "variant", text: true },
      "throughput_pkts_per_rtt", "goodput_bps", "loss_event_rate", "loss_rate", "drops_per_loss_event",
      "timeouts", "fast_recoveries", "mean_rtt_s", "mean_rto_s", "retransmits", "drops",
    ], { id: "flows-table" });
    // The links the flows share (a dumbbell's per-flow access links are its hosts' wires).
    // An 802.11 network's links carry the MAC's counts in `wifi`: named as the sweeps name them.
    const shared = result.links.filter((l) => !l.name.includes("-access")).map((l) => (l.wifi ? {
      ...l, mac_frames_sent: l.wifi.frames_sent, mac_retries: l.wifi.mac_retries,
      mac_retry_drops: l.wifi.retry_drops, mac_collisions: l.wifi.collisions,
    } : l));
    table(document.getElementById("links"), shared, [
      { name: "name", text: true }, "rate_bps", "utilization", "mean_queue_pkts", "mean_queue_delay_s", "p95_queue_delay_s",
      "p99_queue_delay_s", "queue_drops", "loss_drops",
      // Only links under CoDel, PIE or FQ-CoDel tell their drops apart.
      ...(shared.some((l) => l.aqm_drops !== undefined) ? ["overflow_drops", "aqm_drops"] : []),
      ...(shared.some((l) => l.wifi) ? ["mac_frames_sent", "mac_retries", "mac_retry_drops", "mac_collisions"] : []),
    ], { id: "links-table" });

    if (!traces.recorded) {
      document.getElementById("no-traces").hidden = false;
      return;
    }
    document.getElementById("traces-card").hidden = false;
    // The downloads are every sample, whatever the plots draw.
    downloads(document.getElementById("traces-downloads"), "the traces", `/v1/runs/${id}/traces`, `run-${id}-traces`);
    describe(traces);
    const t = traces.rows.map((r) => r.time_s);
    const column = (c) => traces.rows.map((r) => r[c]);
    const flowNames = [...new Set(traces.series.filter((s) => s.kind === "flow").map((s) => s.name))];
    const panels = flowNames.length <= MAX_PANELS ? flowNames.length : 1;
    const panelOf = (name) => (panels === 1 ? 0 : flowNames.indexOf(name));
    const yName = (k) => (k ? `y${k + 1}` : "y");
    const WINDOW = new Set(["cwnd", "ssthresh"]);
    const windowTraces = traces.series.filter((s) => s.kind === "flow" && WINDOW.has(s.quantity)).map((s) => ({
      type: "scatter", mode: "lines", x: t, y: column(s.column), name: `${s.name} ${s.quantity}`,
      meta: { column: s.column, flow: s.name }, yaxis: yName(panelOf(s.name)),
      line: { color: COLORS[flowNames.indexOf(s.name) % COLORS.length], dash: s.quantity === "ssthresh" ? "dash" : "solid", width: s.quantity === "ssthresh" ? 1.5 : 2, shape: "hv" },
    }));
    // One y axis per panel, stacked top to bottom (the first flow on top), one time axis.
    const gap = 0.04;
    const windowLayout = { xaxis: { title: { text: label("time_s") }, anchor: yName(panels - 1) } };
    for (let k = 0; k < panels; k++) {
      const top = 1 - k / panels, bottom = 1 - (k + 1) / panels;
      windowLayout[k ? `yaxis${k + 1}` : "yaxis"] = {
        domain: [bottom + (k < panels - 1 ? gap / 2 : 0), top - (k ? gap / 2 : 0)], anchor: "x", rangemode: "tozero",
        title: { text: panels === 1 ? label("cwnd") : `${flowNames[k]} (pkts)` },
      };
    }
    // Paper 004's Figs. 6-8: each flow's delivery rate and one-way delay over time.
    const perFlow = (quantity) => traces.series.filter((s) => s.kind === "flow" && s.quantity === quantity).map((s) => ({
      type: "scatter", mode: "lines", x: t, y: column(s.column), name: s.name, meta: { column: s.column, flow: s.name },
      line: { color: COLORS[flowNames.indexOf(s.name) % COLORS.length], shape: "hv" },
    }));
    const rateTraces = perFlow("throughput_bps");
    const delayTraces = perFlow("delay_s");
    const cwndDiv = document.getElementById("plot-cwnd");
    cwndDiv.style.height = `${Math.max(440, 90 + PANEL_PX * panels)}px`;
    const queueTraces = traces.series.filter((s) => s.kind === "link").map((s, i) => ({
      type: "scatter", mode: "lines", x: t, y: column(s.column), name: `${s.name} ${s.quantity}`,
      meta: { column: s.column }, line: { color: COLORS[(i + 5) % COLORS.length], shape: "hv" },
    }));
    await plot("plot-cwnd", windowTraces, windowLayout, { name: `run-${id.slice(0, 8)}-cwnd` });
    follow("plot-cwnd");
    if (queueTraces.length) {
      await plot("plot-queue", queueTraces, {
        xaxis: { title: { text: label("time_s") } }, yaxis: { title: { text: label("queue") }, rangemode: "tozero" },
      }, { name: `run-${id.slice(0, 8)}-queue` });
      follow("plot-queue");
    } else {
      const none = document.getElementById("plot-queue");
      none.style.height = "auto";
      none.replaceChildren(el("p", { class: "muted" }, "No queue trace recorded."));
    }
    if (rateTraces.length || delayTraces.length) {
      document.getElementById("rate-traces").hidden = false;
      for (const [plotId, drawn, quantity] of [["plot-rate", rateTraces, "throughput_bps"], ["plot-delay", delayTraces, "delay_s"]]) {
        if (!drawn.length) continue;
        await plot(plotId, drawn, {
          xaxis: { title: { text: label("time_s") } }, yaxis: { title: { text: label(quantity) }, rangemode: "tozero" },
        }, { name: `run-${id.slice(0, 8)}-${quantity}`, logs: ["y"] });
        follow(plotId);
      }
    }
  }

  let scenarioShown = false;
  async function refresh() {
    try {
      const run = await api(`/v1/runs/${id}`);
      statusLine(run);
      if (!scenarioShown) { scenarioShown = true; await showScenario(run); }
      if (run.status === "queued" || run.status === "running") {
        message(`This run is ${run.status}; the page refreshes until it has finished.`);
        setTimeout(refresh, 2000);
        ready();  // drawn as far as it can be, until the next refresh
        return;
      }
      message("");
      if (run.status === "succeeded") await showResult();
      else message(`This run ${run.status}${run.error ? ": " + run.error : "."}`, run.status === "failed" ? "error" : "");
      ready();
    } catch (e) {
      fatal(e);
    }
  }
  refresh();
})();
