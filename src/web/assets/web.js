// The dashboard's only script, served from the package (no CDN, no build step). It never inserts
// HTML: every value it shows goes through textContent or an SVG attribute.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
/** Points the live chart keeps (Sidekiq's realtime chart keeps 50). */
const LIVE_POINTS = 50;

function svgEl(name, attrs) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/** Draws one or more series as lines in `container` (an SVG sized by CSS). */
function drawChart(container, labels, series) {
  const width = 800;
  const height = 180;
  const pad = 24;
  const max = Math.max(1, ...series.flatMap((s) => s.values));
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
  const legend = svgEl("text", { x: width - 200, y: 12, class: "tick" });
  legend.textContent = series.map((s) => `${s.name}: ${(s.values.at(-1) ?? 0).toLocaleString("en-US")}`).join("  ");
  svg.appendChild(legend);
  container.replaceChildren(svg);
}

function setupHistory() {
  const el = document.getElementById("history-chart");
  if (!el) return;
  const data = JSON.parse(el.dataset.series || "{}");
  drawChart(el, data.dates || [], [
    { name: "processed", cls: "processed", values: data.processed || [] },
    { name: "failed", cls: "failed", values: data.failed || [] },
  ]);
}

function setupLive() {
  const el = document.getElementById("live-chart");
  if (!el) return;
  const status = document.getElementById("live-status");
  const slider = document.getElementById("interval");
  const shown = document.getElementById("interval-value");
  const labels = [];
  const processed = [];
  const failed = [];
  let last = null;
  let source = null;

  const close = (why) => {
    if (source) source.close();
    source = null;
    status.textContent = why;
  };
  const open = () => {
    close("connecting…");
    source = new EventSource(`${el.dataset.stream}?interval=${slider.value}`);
    source.addEventListener("stats", (event) => {
      const stats = JSON.parse(event.data);
      const s = stats.sidekiq;
      if (last) {
        labels.push(stats.server_utc_time);
        processed.push(Math.max(0, s.processed - last.processed));
        failed.push(Math.max(0, s.failed - last.failed));
        for (const list of [labels, processed, failed]) if (list.length > LIVE_POINTS) list.shift();
      }
      last = s;
      el.dataset.points = String(labels.length);
      el.dataset.lastProcessed = String(processed.at(-1) ?? 0);
      drawChart(el, labels, [
        { name: "processed", cls: "processed", values: processed },
        { name: "failed", cls: "failed", values: failed },
      ]);
      for (const [name, value] of Object.entries({
        processed: s.processed,
        failed: s.failed,
        busy: s.busy,
        enqueued: s.enqueued,
        retries: s.retries,
        scheduled: s.scheduled,
        dead: s.dead,
      })) {
        const card = document.querySelector(`[data-stat="${name}"]`);
        if (card) card.textContent = value.toLocaleString("en-US");
      }
      status.textContent = `live · ${stats.server_utc_time}`;
    });
    source.addEventListener("error", () => (status.textContent = "reconnecting…"));
  };
  slider.addEventListener("input", () => (shown.textContent = `${slider.value} s`));
  slider.addEventListener("change", open);
  // A hidden tab asks nothing of Redis: the stream closes and reopens when the tab is shown again.
  document.addEventListener("visibilitychange", () => (document.hidden ? close("paused (tab hidden)") : open()));
  if (!document.hidden) open();
  else close("paused (tab hidden)");
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
  setupHistory();
  setupLive();
});
