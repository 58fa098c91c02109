// The dashboard's script for forms and a class's two Metrics charts (SVG, each with titled axes, tick
// labels, a legend and a message when empty), served from the package (no CDN, no build step); the time
// charts drawn with uPlot are in charts.js. It never inserts HTML: every value it shows
// goes through textContent or an SVG attribute.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function svgEl(name, attrs) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/** The SVG charts' height and least width (px; the width follows the container) and the plot's margins. */
const H = 240;
const MIN_WIDTH = 400;
const M = { left: 64, right: 16, top: 30, bottom: 46 };

function text(svg, x, y, content, attrs = {}) {
  const el = svgEl("text", { x, y, class: "tick", ...attrs });
  el.textContent = content;
  svg.appendChild(el);
  return el;
}

/** 0 and whole steps of 1, 2 or 5 × 10^k up to at least `max`, about 4 of them: a count's ticks. */
function countTicks(max) {
  const rough = Math.max(1, max / 4);
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough);
  const ticks = [];
  for (let v = 0; v < max + step; v += step) ticks.push(v);
  return ticks;
}

/**
 * An SVG with a value axis (`ticks`, their `format`, titled `yTitle`), an x axis titled `xTitle`, and a
 * legend of `legend` ([class, name]); returns the svg and `y(v)` for the plot.
 */
function frame(W, { ticks, format = (v) => v.toLocaleString("en-US"), yTitle, xTitle, legend }) {
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" });
  const top = ticks.at(-1) || 1;
  const y = (v) => H - M.bottom - ((H - M.top - M.bottom) * v) / top;
  const yAxis = svgEl("g", { class: "y-axis" });
  for (const v of ticks) {
    yAxis.appendChild(svgEl("line", { x1: M.left, y1: y(v), x2: W - M.right, y2: y(v), class: "grid" }));
    text(yAxis, M.left - 6, y(v) + 4, format(v), { "text-anchor": "end" });
  }
  svg.appendChild(yAxis);
  const mid = (M.top + H - M.bottom) / 2;
  text(svg, 12, mid, yTitle, { class: "axis-title", "text-anchor": "middle", transform: `rotate(-90 12 ${mid})` });
  text(svg, (M.left + W - M.right) / 2, H - 4, xTitle, { class: "axis-title", "text-anchor": "middle" });
  svg.appendChild(svgEl("line", { x1: M.left, y1: y(0), x2: W - M.right, y2: y(0), class: "axis" }));
  const key = svgEl("g", { class: "legend" });
  let x = M.left;
  for (const [cls, name] of legend) {
    key.appendChild(svgEl("rect", { x, y: 8, width: 10, height: 10, class: cls }));
    x += 16 + text(key, x + 14, 17, name).textContent.length * 6.5;
  }
  svg.appendChild(key);
  return { svg, y };
}

function emptyNote(container, message) {
  const p = document.createElement("p");
  p.className = "chart-note muted";
  p.textContent = message;
  container.replaceChildren(p);
}

/** The x-axis labels, at most about 10, as `g.x-axis` text (the tests and screen readers read them). */
function xAxis(svg, ticks) {
  const g = svgEl("g", { class: "x-axis" });
  for (const [x, label] of ticks) text(g, x, H - M.bottom + 16, label, { "text-anchor": "middle" });
  svg.appendChild(g);
}

/**
 * A class's histogram: successful runs per execution-time bucket (each shorter than its label), one bar
 * per bucket from the fastest to the slowest bucket used.
 */
function drawHistogram(el) {
  const { labels = [], values = [] } = JSON.parse(el.dataset.series || "{}");
  const used = values.flatMap((v, i) => (v > 0 ? [i] : []));
  if (used.length === 0) return emptyNote(el, "No successful run in this period: nothing was timed.");
  // The buckets used, widened to at least 6 so a single bar is not the whole width.
  const first = Math.max(0, Math.min(used[0], used.at(-1) - 5));
  const shown = labels.slice(first, Math.max(used.at(-1) + 1, first + 6));
  const W = Math.max(MIN_WIDTH, el.clientWidth);
  const { svg, y } = frame(W, {
    ticks: countTicks(Math.max(...values)),
    yTitle: "runs",
    xTitle: "execution time (each bar: runs shorter than its label)",
    legend: [["bar", "successful runs"]],
  });
  const step = (W - M.left - M.right) / shown.length;
  const every = Math.ceil(shown.length / 12);
  const ticks = [];
  shown.forEach((label, i) => {
    const v = values[first + i] ?? 0;
    const x = M.left + i * step;
    const bar = svgEl("rect", { x: x + 2, y: y(v), width: step - 4, height: y(0) - y(v), class: "bar" });
    const title = svgEl("title", {});
    title.textContent = `< ${label}: ${v.toLocaleString("en-US")} runs`;
    bar.appendChild(title);
    svg.appendChild(bar);
    if (i % every === 0) ticks.push([x + step / 2, `< ${label}`]);
  });
  xAxis(svg, ticks);
  el.replaceChildren(svg);
}

/** Minutes between the bubble chart's time labels: the least that keeps them to about 10. */
const MINUTE_TICKS = [1, 2, 5, 10, 15, 30, 60, 120];

/** Runs per minute (x, local time) and execution-time bucket (y), a circle's area proportional to the count. */
function drawBubbles(el) {
  const { times = [], buckets = [], points = [] } = JSON.parse(el.dataset.series || "{}");
  if (points.length === 0 || times.length === 0)
    return emptyNote(el, "No successful run in this period: nothing was timed.");
  const max = Math.max(1, ...points.map((p) => p[2]));
  const used = points.map((p) => p[1]);
  const [lo, hi] = [Math.min(...used), Math.max(...used, Math.min(...used) + 1)];
  const rows = [];
  for (let b = lo; b <= hi; b++) rows.push(b);
  const W = Math.max(MIN_WIDTH, el.clientWidth);
  const { svg, y } = frame(W, {
    ticks: rows.map((b) => b - lo + 1),
    format: (v) => `< ${buckets[v - 1 + lo] ?? ""}`,
    yTitle: "execution time",
    xTitle: "local time",
    legend: [["bubble", `runs in a minute (largest: ${max.toLocaleString("en-US")})`]],
  });
  // The value axis counts rows from 1, so its 0 line is the floor below the fastest row shown.
  const x = (i) => M.left + 8 + ((W - M.left - M.right - 16) * i) / Math.max(1, times.length - 1);
  for (const [i, b, n] of points) {
    const circle = svgEl("circle", { cx: x(i), cy: y(b - lo + 1), r: 2 + 8 * Math.sqrt(n / max), class: "bubble" });
    const title = svgEl("title", {});
    title.textContent = `${n.toLocaleString("en-US")} runs < ${buckets[b] ?? ""}`;
    circle.appendChild(title);
    svg.appendChild(circle);
  }
  const every = MINUTE_TICKS.find((m) => times.length / m <= 10) ?? Math.ceil(times.length / 10);
  const clock = (iso) => new Date(iso).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" });
  xAxis(
    svg,
    times.flatMap((iso, i) => (i % every === 0 ? [[x(i), clock(iso)]] : [])),
  );
  el.replaceChildren(svg);
}

function setupForms() {
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }
  const boxes = [...document.querySelectorAll("input.select")];
  let lastClicked = null;
  for (const box of boxes) {
    box.addEventListener("click", (event) => {
      // Shift-click selects the range since the last box clicked, as Sidekiq's lists do.
      if (event.shiftKey && lastClicked !== null) {
        const [a, b] = [boxes.indexOf(lastClicked), boxes.indexOf(box)].sort((x, y) => x - y);
        for (const other of boxes.slice(a, b + 1)) other.checked = box.checked;
      }
      lastClicked = box;
    });
  }
  for (const all of document.querySelectorAll("input.select-all")) {
    all.addEventListener("change", () => boxes.forEach((b) => (b.checked = all.checked)));
  }
}

/** Draws `draw(el)` now and again whenever `el`'s width changes (the SVG is drawn to its width in px). */
function drawToWidth(id, draw) {
  const el = document.getElementById(id);
  if (!el) return;
  let width = -1;
  new ResizeObserver(() => {
    if (el.clientWidth === width) return;
    width = el.clientWidth;
    draw(el);
  }).observe(el);
}

document.addEventListener("DOMContentLoaded", () => {
  setupForms();
  drawToWidth("histogram-chart", drawHistogram);
  drawToWidth("bubble-chart", drawBubbles);
});
