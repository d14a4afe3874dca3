// tcplab dashboards: helpers shared by the pages (window.tcplab). Every number a page shows
// comes from the JSON API through `api()`; every plot is drawn with the bundled Plotly.
"use strict";
(function () {
  const config = JSON.parse(document.getElementById("page-config").textContent);

  class ApiError extends Error {
    constructor(status, detail, url) {
      super(`${url}: ${status} ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
      this.status = status;
      this.detail = detail;
    }
  }

  // JSON, with integers beyond 2^53 (64-bit seeds) kept exact as their text.
  function parse(text) {
    return JSON.parse(text, (key, value, context) =>
      typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value) && context && context.source
        ? context.source : value);
  }

  async function api(url, options) {
    const response = await fetch(url, { headers: { Accept: "application/json" }, ...options });
    let body = null;
    try { body = parse(await response.text()); } catch (e) { body = null; }
    if (!response.ok) throw new ApiError(response.status, body && body.detail !== undefined ? body.detail : body, url);
    return body;
  }

  // "a=1&b=2", leaving out null and undefined.
  function qs(params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== "") q.set(k, v);
    return q.toString();
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // The one number format of the pages: integers below a million whole (counts, indices), other
  // numbers to 4 significant digits without trailing zeros (what d3's ".4~g" prints, so tables,
  // notes and the plots' hover labels agree: 0.0005, 113.3, 5.12e+6); lists and objects as
  // their parts.
  function fmt(x) {
    if (x === null || x === undefined) return "—";
    if (typeof x === "number") {
      if ((Number.isInteger(x) && Math.abs(x) < 1e6) || !Number.isFinite(x)) return String(x);
      return x.toPrecision(4).replace(/(\.\d*?)0+(e|$)/, "$1$2").replace(/\.(e|$)/, "$1");
    }
    if (Array.isArray(x)) return `[${x.map(fmt).join(", ")}]`;
    if (typeof x === "object") return Object.entries(x).map(([k, v]) => `${k} ${fmt(v)}`).join(", ");
    return String(x);
  }
  const HOVER = ".4~g";  // fmt's format in Plotly's templates: "%{y:.4~g}"

  // A time as UTC, the same on every page: "2026-11-26 10:17 UTC", its seconds when it has
  // some ("2026-11-26 10:17:05 UTC"); null: "—".
  function when(iso) {
    if (!iso) return "—";
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return String(iso);
    const text = d.toISOString().slice(0, 19).replace("T", " ");
    return `${text.endsWith(":00") ? text.slice(0, 16) : text} UTC`;
  }

  // Readable names and units, [name, unit], of the metrics, trace quantities and table columns
  // the pages plot ...
  const NAMES = {
    throughput_pkts_per_rtt: ["throughput", "pkts/RTT"], goodput_pkts_per_rtt: ["goodput", "pkts/RTT"],
    throughput_bps: ["throughput", "b/s"], goodput_bps: ["goodput", "b/s"],
    model_pkts_per_rtt: ["model throughput", "pkts/RTT"], sim_pkts_per_rtt: ["simulated throughput", "pkts/RTT"],
    rtt_propagation_s: ["propagation RTT", "s"], mean_rtt_s: ["mean RTT", "s"], mean_rto_s: ["mean RTO", "s"],
    packets_sent: ["packets sent", "pkts"], packets_received: ["packets received", "pkts"],
    retransmits: ["retransmissions", "pkts"], drops: ["drops", "pkts"], ack_drops: ["ACK drops", "pkts"],
    loss_rate: ["loss rate", "per packet"], loss_events: ["loss events", "count"],
    loss_event_rate: ["loss event rate p", "per packet"], drops_per_loss_event: ["drops per loss event", "pkts"],
    timeouts: ["timeouts", "count"], fast_retransmits: ["fast retransmits", "count"],
    fast_recoveries: ["fast recoveries", "count"], mean_recovery_s: ["mean recovery time", "s"],
    downloads: ["downloads", "count"], download_time_s: ["download time", "s"],
    core_events_per_s: ["core speed", "events/s"], core_wall_s: ["core wall time", "s"],
    time_s: ["time", "s"], cwnd: ["congestion window", "pkts"], ssthresh: ["slow-start threshold", "pkts"],
    queue: ["queue", "pkts"], point: ["grid point", ""], seed: ["seed", ""],
    delay_s: ["one-way delay", "s"], utilization: ["utilisation", "fraction"], link_packets: ["packets carried", "pkts"],
    link_drops: ["link drops", "pkts"], queue_drops: ["queue drops", "pkts"], loss_drops: ["loss-module drops", "pkts"],
    overflow_drops: ["overflow drops", "pkts"], aqm_drops: ["AQM drops", "pkts"], ecn_marks: ["ECN marks", "pkts"],
    mac_frames_sent: ["802.11 frames sent", "frames"], mac_retries: ["802.11 MAC retries", "frames"],
    mac_retry_drops: ["802.11 frames given up", "frames"], mac_collisions: ["802.11 collisions", "frames"],
    mean_queue_pkts: ["mean queue", "pkts"], mean_queue_delay_s: ["mean queueing delay", "s"],
    p95_queue_delay_s: ["queueing delay p95", "s"], p99_queue_delay_s: ["queueing delay p99", "s"],
    jain: ["Jain's fairness index", ""], uf_percent: ["unfairness UF", "%"],
  };
  // ... and of the scenario paths a sweep varies, by their last one or two parts.
  const PATHS = {
    "loss.m": ["losses per loss event m", "pkts"], "loss.p": ["loss event rate p", "per packet"],
    "loss.rate": ["random loss rate", "per packet"], "loss.packets": ["packets dropped", ""],
    "loss.spacing": ["loss event spacing", ""], "queue.limit_pkts": ["buffer", "pkts"],
    "queue.weight": ["RED weight", ""], "queue.max_p": ["RED max_p", ""], "queue.min_th_pkts": ["RED min threshold", "pkts"],
    "app.rate_mbps": ["CBR rate", "Mb/s"], "app.packet_bytes": ["CBR packet size", "bytes"],
    rate_mbps: ["link rate", "Mb/s"], delay_ms: ["link delay", "ms"], rtt_ms: ["RTT", "ms"], variant: ["TCP variant", ""],
    count: ["flows", ""], start_s: ["start time", "s"], min_rto_s: ["minimum RTO", "s"], max_rto_s: ["maximum RTO", "s"],
    initial_rto_s: ["initial RTO", "s"], max_window_pkts: ["maximum window", "pkts"], duration_s: ["duration", "s"],
    warmup_s: ["warm-up", "s"], cloud_latency_ms: ["cloud latency", "ms"], connections: ["connections", ""],
    background_flows: ["background flows", ""],
  };
  const UNITS = [["_pkts_per_rtt", "pkts/RTT"], ["_mbps", "Mb/s"], ["_kbps", "kb/s"], ["_bps", "b/s"], ["_ms", "ms"],
    ["_s", "s"], ["_pkts", "pkts"], ["_bytes", "bytes"], ["_pct", "%"]];

  // A metric, column or axis path as {text, unit}: `flows[*].loss.m` → losses per loss event m
  // [pkts]; `flows[1].app.rate_mbps` → CBR rate, flow 1 [Mb/s]; unknown names by their suffix.
  function describe(name) {
    name = String(name);
    if (NAMES[name]) return { text: NAMES[name][0], unit: NAMES[name][1] };
    const parts = name.split(".");
    const last = parts[parts.length - 1];
    const known = PATHS[parts.slice(-2).join(".")] || PATHS[last] || NAMES[last];
    const whose = [...name.matchAll(/(flows|links)\[(\d+)\]/g)].map((m) => `${m[1] === "flows" ? "flow" : "link"} ${m[2]}`);
    let [text, unit] = known || [last, ""];
    if (!known) {
      const suffix = UNITS.find(([s]) => last.endsWith(s));
      if (suffix) { text = last.slice(0, -suffix[0].length); unit = suffix[1]; }
      text = text.replaceAll("_", " ");
    }
    return { text: [text, ...whose].join(", "), unit };
  }

  // "throughput (pkts/RTT)", with `note` after it: "throughput (pkts/RTT), mean and 95 % CI".
  function label(name, note) {
    const { text, unit } = describe(name);
    return `${text}${unit ? ` (${unit})` : ""}${note ? `, ${note}` : ""}`;
  }

  // An axis value as a plot coordinate: numbers as they are, anything else as its text.
  function coord(x) {
    return typeof x === "number" || x === null ? x : typeof x === "object" ? JSON.stringify(x) : String(x);
  }

  // rows → <table>; columns: [name] or [{name, label, link(row) → href, text: bool}].
  function table(container, rows, columns, options) {
    options = options || {};
    const cols = columns.map((c) => (typeof c === "string" ? { name: c } : c));
    const head = el("tr", {}, cols.map((c) => el("th", { class: c.text ? "text" : null, title: label(c.name) }, breakable(c.label || c.name))));
    const body = rows.map((row) =>
      el("tr", { class: options.rowClass ? options.rowClass(row) : null },
        cols.map((c) => {
          const value = c.value ? c.value(row) : row[c.name];
          const content = c.link && c.link(row) ? el("a", { href: c.link(row) }, fmt(value)) : fmt(value);
          const long = c.text && typeof value === "string" && value.length > 40 ? "long" : "";
          return el("td", { class: [c.text ? "text" : "", long, c.class || ""].join(" ").trim() || null }, content);
        })));
    const t = el("table", { id: options.id }, el("thead", {}, head), el("tbody", {}, body));
    // In a box of its own that scrolls sideways: a wide table never runs past its card.
    container.replaceChildren(rows.length ? el("div", { class: "table-scroll" }, t) : el("p", { class: "muted" }, options.empty || "Nothing yet."));
    return t;
  }

  // A long column name that may wrap after its dots and underscores (a table fits its card).
  function breakable(text) {
    return String(text).split(/(?<=[._])/).flatMap((part, i) => (i ? [el("wbr"), part] : [part]));
  }

  // "Download <what>: CSV · Parquet · JSON", each a link to the API endpoint with ?format=.
  function downloads(container, what, url, filename) {
    const sep = url.includes("?") ? "&" : "?";
    const links = ["csv", "parquet", "json"].map((f) =>
      el("a", { href: `${url}${sep}format=${f}`, download: `${filename}.${f}`, "data-format": f }, f === "csv" ? "CSV" : f === "json" ? "JSON" : "Parquet"));
    container.replaceChildren(`Download ${what}:`, ...links);
    container.dataset.url = url;
  }

  function message(text, kind) {
    const box = document.getElementById("message");
    box.hidden = !text;
    box.className = "message" + (kind ? " " + kind : "");
    box.textContent = text || "";
  }

  function progress(container, done, total) {
    const pct = total ? Math.round((100 * done) / total) : 0;
    container.replaceChildren(
      el("div", { class: "progress", role: "progressbar", "aria-valuenow": pct, "aria-valuemin": 0, "aria-valuemax": 100 },
        el("div", { style: `width: ${pct}%` })),
      el("p", { class: "muted" }, `${done} of ${total} runs finished (${pct} %); this page refreshes by itself.`));
  }

  function badge(status) { return el("span", { class: `badge ${status}` }, status); }

  // Figures for papers: every plot's mode bar downloads it as a PNG (the camera, at twice the
  // size for print) and as an SVG, FIGURE pixels, named after what it shows.
  const FIGURE = { width: 1000, height: 600 };
  const SVG_ICON = { width: 1000, height: 1000, path: "M500 50 L850 400 H620 V750 H380 V400 H150 Z M150 850 H850 V950 H150 Z" };

  function plotConfig(name) {
    const filename = `tcplab-${name}`.replace(/[^\w.-]+/g, "_");
    return {
      displaylogo: false, responsive: true, displayModeBar: true,
      toImageButtonOptions: { format: "png", filename, scale: 2, ...FIGURE },
      modeBarButtonsToAdd: [{
        name: "svg", title: "Download plot as an SVG", icon: SVG_ICON,
        click: (gd) => Plotly.downloadImage(gd, { format: "svg", filename, ...FIGURE }),
      }],
    };
  }

  // Log scales chosen per plot (kept across redraws); a plot's check boxes set them.
  const scales = new Map();

  function axesOf(layout, letter) {
    const keys = Object.keys(layout).filter((k) => new RegExp(`^${letter}axis\\d*$`).test(k));
    return keys.length ? keys : [`${letter}axis`];
  }

  function withScales(id, layout) {
    const chosen = scales.get(id) || {};
    const out = { ...layout };
    for (const letter of ["x", "y"]) {
      if (chosen[letter] === undefined) continue;
      for (const k of axesOf(out, letter)) out[k] = { ...(out[k] || {}), type: chosen[letter] ? "log" : "linear" };
    }
    return out;
  }

  // "log x" / "log y" check boxes before the plot (`#<id>-logx`, `#<id>-logy`).
  function scaleToggles(div, logs) {
    let box = document.getElementById(`${div.id}-scales`);
    if (!logs.length) { if (box) box.remove(); return; }
    if (!box) {
      box = el("div", { class: "plot-tools", id: `${div.id}-scales` });
      div.before(box);
    }
    const chosen = scales.get(div.id) || {};
    box.replaceChildren(...logs.map((letter) => {
      const input = el("input", { type: "checkbox", id: `${div.id}-log${letter}`, checked: chosen[letter] === undefined ? (div.layout[`${letter}axis`] || {}).type === "log" : chosen[letter] });
      input.addEventListener("change", async () => {
        scales.set(div.id, { ...(scales.get(div.id) || {}), [letter]: input.checked });
        const update = {};
        for (const k of axesOf(div.layout, letter)) {
          // A reversed axis (delay growing to the left) stays reversed on the other scale.
          const range = (div._fullLayout[k] || {}).range || [0, 1];
          update[`${k}.type`] = input.checked ? "log" : "linear";
          update[`${k}.autorange`] = range[0] > range[1] ? "reversed" : true;
        }
        div.dataset.state = "drawing";
        await Plotly.relayout(div, update);
        div.dataset[`log${letter}`] = input.checked ? "1" : "0";
        div.dataset.state = "ready";
      });
      return el("label", {}, input, ` log ${letter}`);
    }));
  }

  // Draws (or redraws) a plot. options: name (the downloads' file name), logs (the axes with
  // a log toggle, default ["y"]; [] for none).
  async function plot(id, traces, layout, options) {
    options = options || {};
    const div = document.getElementById(id);
    div.dataset.state = "drawing";
    const axis = { exponentformat: "power", hoverformat: HOVER, automargin: true };
    const merged = {
      margin: { t: 30, r: 20, b: 50, l: 60 },
      font: { family: "system-ui, sans-serif", size: 12 },
      legend: { orientation: "h", y: -0.18 },
      hovermode: "closest",
      ...layout,
    };
    for (const letter of ["x", "y"]) for (const k of axesOf(merged, letter)) merged[k] = { ...axis, ...(merged[k] || {}) };
    await Plotly.react(div, traces, withScales(id, merged), plotConfig(options.name || id));
    scaleToggles(div, options.logs || ["y"]);
    div.dataset.state = "ready";
    return div;
  }

  // Menus changed in quick succession start overlapping redraws, and a slower, older one would
  // leave its plot, downloads or table behind. `latestOnly(draw)` calls draw(current, ...args);
  // draw checks `current()` after each await and stops writing the page once a newer call began.
  function latestOnly(draw) {
    let latest = 0;
    return (...args) => {
      const mine = ++latest;
      return draw(() => mine === latest, ...args);
    };
  }

  function ready() { document.body.dataset.ready = "1"; }

  function fatal(error) {
    console.warn(error);
    message(error instanceof ApiError ? `The API answered ${error.status}: ${fmt(error.detail)}` : String(error), "error");
    ready();
  }

  // Numbers of a list, summed / averaged, skipping nulls.
  function mean(values) {
    const xs = values.filter((v) => typeof v === "number" && Number.isFinite(v));
    return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
  }

  // Groups rows by key(row), keeping first-seen order.
  function groupBy(rows, key) {
    const groups = new Map();
    for (const row of rows) {
      const k = key(row);
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(row);
    }
    return groups;
  }

  // Sorts rows by an axis value: numbers numerically; anything else (variants, spacings) in
  // the order of `values`, the axis's own (a sweep's axes list them), else by its text.
  function byAxis(axis, values) {
    const rank = new Map((values || []).map((v, i) => [JSON.stringify(coord(v)), i]));
    return (a, b) => {
      const x = a[axis], y = b[axis];
      if (typeof x === "number" && typeof y === "number") return x - y;
      const i = rank.get(JSON.stringify(coord(x))), j = rank.get(JSON.stringify(coord(y)));
      if (i !== undefined && j !== undefined) return i - j;
      return String(coord(x)).localeCompare(String(coord(y)));
    };
  }

  window.tcplab = { config, api, ApiError, qs, el, fmt, HOVER, when, describe, label, coord, table, downloads, message, progress, badge, plot, latestOnly, ready, fatal, mean, groupBy, byAxis };
})();
