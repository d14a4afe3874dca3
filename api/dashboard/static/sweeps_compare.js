// Two sweeps side by side (GET /v1/sweeps/compare): each one's mean and 95 % CI of a metric
// along an axis they share, per flow group, and the aligned table with difference and ratio.
// The choices live in the address (?a=&b=&metric=&flow=&axis=), so a view can be shared.
"use strict";
(async function () {
  const t = window.tcplab;
  const { config, api, el, table, coord, downloads, message, plot, ready, fatal, groupBy, byAxis } = t;
  // Sweep a in blues and greens, solid; b in reds and oranges, dashed; one shade per flow group.
  const COLORS = { a: ["#2463eb", "#17a398", "#5b3cc4", "#0b7285"], b: ["#e4572e", "#f39c12", "#c0392b", "#a61e4d"] };
  const $ = (id) => document.getElementById(id);

  function label(s) { return `${s.name || s.id.slice(0, 8)}${s.preset ? ` (${s.preset})` : ""} · ${s.created_at.slice(0, 16).replace("T", " ")} UTC`; }

  async function sweepsToChoose() {
    const page = await api("/v1/sweeps?limit=200");
    const known = new Map(page.items.map((s) => [s.id, s]));
    for (const id of [config.a, config.b]) {  // an archived or older sweep given in the address
      if (id && !known.has(id)) known.set(id, await api(`/v1/sweeps/${id}`));
    }
    for (const side of ["a", "b"]) {
      const select = $(`sweep-${side}`);
      select.append(el("option", { value: "" }, "—"), ...[...known.values()].map((s) => el("option", { value: s.id }, label(s))));
      select.value = config[side] || "";
    }
    const metric = $("metric");
    metric.append(...config.metrics.map((m) => el("option", { value: m }, m)));
    metric.value = config.metric;
    if (config.flow) $("flow").append(el("option", { value: config.flow }, config.flow));
    $("flow").value = config.flow || "";
  }

  function choices() {
    return { a: $("sweep-a").value, b: $("sweep-b").value, metric: $("metric").value, flow: $("flow").value, axis: $("axis").value };
  }

  function remember(c) {
    const q = t.qs({ a: c.a || null, b: c.b || null, metric: c.metric, flow: c.flow || null, axis: c.axis || null });
    history.replaceState(null, "", `${location.pathname}?${q}`);
  }

  function fillAxes(body, wanted) {
    const select = $("axis");
    select.replaceChildren(...body.axes.map((p) => el("option", { value: p }, p)));
    if (body.axes.includes(wanted)) select.value = wanted;
    return select.value || null;
  }

  function fillFlows(rows, wanted) {
    const select = $("flow");
    const flows = [...new Set(rows.map((r) => r.flow))];
    select.replaceChildren(el("option", { value: "" }, "all"), ...flows.map((f) => el("option", { value: f }, f)));
    select.value = flows.includes(wanted) ? wanted : "";
  }

  function describe(body) {
    const link = (s) => el("a", { href: `/dashboard/sweeps/${s.id}` }, s.name || s.id.slice(0, 8));
    const parts = ["a: ", link(body.a), " · b: ", link(body.b), ` · aligned on ${body.axes.length ? body.axes.join(", ") : "the flow groups only"}`];
    if (body.only_a.length) parts.push(` · only in a: ${body.only_a.join(", ")}`);
    if (body.only_b.length) parts.push(` · only in b: ${body.only_b.join(", ")}`);
    $("subject").replaceChildren(...parts);
    document.getElementById("title").textContent = `${body.a.name || body.a.id.slice(0, 8)} vs ${body.b.name || body.b.id.slice(0, 8)}`;
  }

  async function draw(body, axis) {
    const others = body.axes.filter((p) => p !== axis);
    const traces = [];
    const flows = [...new Set(body.rows.map((r) => r.flow))];
    for (const side of ["a", "b"]) {
      const rows = body.rows.filter((r) => r[`${side}_mean`] !== null && r[`${side}_mean`] !== undefined);
      const groups = groupBy(rows, (r) => JSON.stringify([r.flow, ...others.map((p) => r[p])]));
      for (const g of groups.values()) {
        if (axis) g.sort(byAxis(axis));
        const rest = others.map((p) => `${p.split(".").pop()}=${t.fmt(g[0][p])}`);
        const name = [`${side}: ${(side === "a" ? body.a : body.b).name || side}`, g[0].flow, ...rest].join(" · ");
        traces.push({
          type: "scatter", mode: axis ? "lines+markers" : "markers", name,
          x: g.map((r) => (axis ? coord(r[axis]) : r.flow)),
          y: g.map((r) => r[`${side}_mean`]),
          error_y: { type: "data", symmetric: false, array: g.map((r) => r[`${side}_ci_high`] - r[`${side}_mean`]), arrayminus: g.map((r) => r[`${side}_mean`] - r[`${side}_ci_low`]) },
          line: { color: COLORS[side][flows.indexOf(g[0].flow) % COLORS[side].length], dash: side === "a" ? "solid" : "dash" },
          meta: { side, flow: g[0].flow },
        });
      }
    }
    const numeric = axis && body.rows.every((r) => typeof r[axis] === "number");
    await plot("plot-compare", traces, {
      xaxis: { title: { text: axis || "flow group" }, type: numeric ? "linear" : "category" },
      yaxis: { title: { text: body.metric } },
    });
  }

  const refresh = t.latestOnly(async (current) => {
    const c = choices();
    remember(c);
    if (!c.a || !c.b) {
      $("compare-card").hidden = true;
      message("Choose two sweeps.", "info");
      return;
    }
    message("");
    // Every flow group at once (the flow menu lists them); one group is filtered here.
    const body = await api(`/v1/sweeps/compare?${t.qs({ a: c.a, b: c.b, metric: c.metric })}`);
    if (!current()) return;
    describe(body);
    fillFlows(body.rows, c.flow);
    const shown = { ...body, rows: c.flow ? body.rows.filter((r) => r.flow === c.flow) : body.rows };
    const axis = fillAxes(body, c.axis || config.axis);
    $("compare-card").hidden = false;
    await draw(shown, axis);
    if (!current()) return;
    const url = `/v1/sweeps/compare?${t.qs({ a: c.a, b: c.b, metric: c.metric, flow: c.flow || null })}`;
    downloads($("compare-downloads"), "both sweeps side by side", url, `sweeps-compare-${c.metric}`);
    table($("compare-table"), shown.rows, [
      ...body.axes, { name: "flow", text: true },
      ...body.only_a.map((p) => `a.${p}`), ...body.only_b.map((p) => `b.${p}`),
      "a_count", "a_mean", "a_ci_low", "a_ci_high", "b_count", "b_mean", "b_ci_low", "b_ci_high", "difference", "ratio",
    ], { id: "compare-table-el" });
  });

  try {
    await sweepsToChoose();
    for (const id of ["sweep-a", "sweep-b", "metric", "flow", "axis"]) {
      $(id).addEventListener("change", () => refresh().then(ready).catch(fatal));
    }
    await refresh();
    ready();
  } catch (error) {
    fatal(error);
  }
})();
