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

  // A cell's text: numbers to 4 significant digits, lists and objects as JSON.
  function fmt(x) {
    if (x === null || x === undefined) return "—";
    if (typeof x === "number") {
      if (Number.isInteger(x)) return String(x);
      const a = Math.abs(x);
      return a !== 0 && (a < 1e-3 || a >= 1e6) ? x.toExponential(3) : String(Number(x.toPrecision(4)));
    }
    if (Array.isArray(x)) return `[${x.map(fmt).join(", ")}]`;
    if (typeof x === "object") return Object.entries(x).map(([k, v]) => `${k} ${fmt(v)}`).join(", ");
    return String(x);
  }

  // An axis value as a plot coordinate: numbers as they are, anything else as its text.
  function coord(x) {
    return typeof x === "number" || x === null ? x : typeof x === "object" ? JSON.stringify(x) : String(x);
  }

  // rows → <table>; columns: [name] or [{name, label, link(row) → href, text: bool}].
  function table(container, rows, columns, options) {
    options = options || {};
    const cols = columns.map((c) => (typeof c === "string" ? { name: c } : c));
    const head = el("tr", {}, cols.map((c) => el("th", { class: c.text ? "text" : null }, c.label || c.name)));
    const body = rows.map((row) =>
      el("tr", { class: options.rowClass ? options.rowClass(row) : null },
        cols.map((c) => {
          const value = c.value ? c.value(row) : row[c.name];
          const content = c.link && c.link(row) ? el("a", { href: c.link(row) }, fmt(value)) : fmt(value);
          return el("td", { class: [c.text ? "text" : "", c.class || ""].join(" ").trim() || null }, content);
        })));
    const t = el("table", { id: options.id }, el("thead", {}, head), el("tbody", {}, body));
    container.replaceChildren(rows.length ? t : el("p", { class: "muted" }, options.empty || "Nothing yet."));
    return t;
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

  const PLOT_CONFIG = { displaylogo: false, responsive: true };

  async function plot(id, traces, layout) {
    const div = document.getElementById(id);
    div.dataset.state = "drawing";
    await Plotly.react(div, traces, {
      margin: { t: 30, r: 20, b: 50, l: 60 },
      font: { family: "system-ui, sans-serif", size: 12 },
      legend: { orientation: "h", y: -0.18 },
      hovermode: "closest",
      ...layout,
    }, PLOT_CONFIG);
    div.dataset.state = "ready";
    return div;
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

  // Sorts rows by an axis value: numbers numerically, anything else by its text.
  function byAxis(axis) {
    return (a, b) => {
      const x = a[axis], y = b[axis];
      if (typeof x === "number" && typeof y === "number") return x - y;
      return String(coord(x)).localeCompare(String(coord(y)));
    };
  }

  window.tcplab = { config, api, ApiError, qs, el, fmt, coord, table, downloads, message, progress, badge, plot, ready, fatal, mean, groupBy, byAxis };
})();
