// The dashboard's script for forms and the Metrics pages' charts, served from the package (no CDN, no
// build step); the Dashboard's time charts are in charts.js. It never inserts HTML: every value it shows
// goes through textContent or an SVG attribute.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function svgEl(name, attrs) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/**
 * Draws one or more series as lines in `container` (an SVG sized by CSS); `legend` false hides the last
 * values. `marks` ({ bucket, label }) are deploys: a dashed vertical line at their bucket, labelled.
 */
function drawChart(container, labels, series, legendShown = true, marks = []) {
  const width = 800;
  const height = 180;
  const pad = 24;
  const max = Math.max(0, ...series.flatMap((s) => s.values)) || 1;
  const svg = svgEl("svg", { viewBox: `0 0 ${width} ${height}`, role: "img" });
  svg.appendChild(svgEl("line", { x1: pad, y1: height - pad, x2: width, y2: height - pad, class: "axis" }));
  const top = svgEl("text", { x: 0, y: 12, class: "tick" });
  top.textContent = max.toLocaleString("en-US");
  svg.appendChild(top);
  const n = Math.max(2, labels.length);
  for (const s of series) {
    const points = s.values.map((v, i) => {
      const x = pad + ((width - pad) * i) / (n - 1);
      const y = height - pad - ((height - 2 * pad) * v) / max;
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    });
    svg.appendChild(svgEl("polyline", { points: points.join(" "), class: `line ${s.cls}` }));
  }
  for (const mark of marks) {
    if (!(mark.bucket >= 0)) continue; // outside the period's buckets
    const x = (pad + ((width - pad) * mark.bucket) / (n - 1)).toFixed(1);
    const line = svgEl("line", { x1: x, y1: pad, x2: x, y2: height - pad, class: "mark" });
    const title = svgEl("title", {});
    title.textContent = `deploy: ${mark.label}`;
    line.appendChild(title);
    svg.appendChild(line);
    tick(svg, Number(x) + 3, pad + 10, mark.label.slice(0, 24));
  }
  if (legendShown) {
    const legend = svgEl("text", { x: width - 200, y: 12, class: "tick" });
    legend.textContent = series.map((s) => `${s.name}: ${(s.values.at(-1) ?? 0).toLocaleString("en-US")}`).join("  ");
    svg.appendChild(legend);
  }
  container.replaceChildren(svg);
}

function tick(svg, x, y, text, anchor = "start") {
  const el = svgEl("text", { x, y, class: "tick", "text-anchor": anchor });
  el.textContent = text;
  svg.appendChild(el);
}

/** Metrics: total seconds per bucket of the top classes, coloured as their swatches in the table. */
function setupMetrics() {
  const el = document.getElementById("metrics-chart");
  if (!el) return;
  const data = JSON.parse(el.dataset.series || "{}");
  const series = (data.series || []).map((s, i) => ({ name: s.name, cls: `s${i}`, values: s.values }));
  drawChart(el, data.labels || [], series, false, data.marks || []);
}

/** A class's histogram: one bar per execution-time bucket, labelled under it. */
function setupHistogram() {
  const el = document.getElementById("histogram-chart");
  if (!el) return;
  const { labels = [], values = [] } = JSON.parse(el.dataset.series || "{}");
  const [width, height, pad] = [800, 180, 24];
  const max = Math.max(1, ...values);
  const step = (width - pad) / Math.max(1, labels.length);
  const svg = svgEl("svg", { viewBox: `0 0 ${width} ${height}`, role: "img" });
  tick(svg, 0, 12, max.toLocaleString("en-US"));
  values.forEach((v, i) => {
    const h = ((height - 2 * pad) * v) / max;
    const x = pad + i * step;
    svg.appendChild(svgEl("rect", { x: x + 1, y: height - pad - h, width: step - 2, height: h, class: "bar" }));
    if (i % 2 === 0) tick(svg, x + step / 2, height - 8, labels[i], "middle");
  });
  el.replaceChildren(svg);
}

/** Runs per minute (x) and execution-time bucket (y), a circle's area proportional to the count. */
function setupBubbles() {
  const el = document.getElementById("bubble-chart");
  if (!el) return;
  const { labels = [], buckets = [], points = [] } = JSON.parse(el.dataset.series || "{}");
  const [width, height, left, pad] = [800, 180, 48, 12];
  const max = Math.max(1, ...points.map((p) => p[2]));
  const used = points.map((p) => p[1]);
  const [lo, hi] = [Math.min(...used, 0), Math.max(...used, 1)];
  const x = (i) => left + ((width - left - pad) * i) / Math.max(1, labels.length - 1);
  const y = (b) => height - 2 * pad - ((height - 3 * pad) * (b - lo)) / Math.max(1, hi - lo);
  const svg = svgEl("svg", { viewBox: `0 0 ${width} ${height}`, role: "img" });
  for (let b = lo; b <= hi; b++) tick(svg, 0, y(b) + 4, buckets[b] ?? "");
  for (const [i, b, n] of points)
    svg.appendChild(svgEl("circle", { cx: x(i), cy: y(b), r: 2 + 8 * Math.sqrt(n / max), class: "bubble" }));
  tick(svg, left, height - 2, labels[0] ?? "");
  tick(svg, width - pad, height - 2, labels.at(-1) ?? "", "end");
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

document.addEventListener("DOMContentLoaded", () => {
  setupForms();
  setupMetrics();
  setupHistogram();
  setupBubbles();
});
