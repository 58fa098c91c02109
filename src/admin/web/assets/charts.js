// The Dashboard's two time charts, drawn with uPlot (served from the package as /assets/uplot.min.js):
// History (processed and failed per day) and Live (per poll of the /stream events). Both have a time
// axis in the browser's local time, a count axis and a legend. Only numbers reach a chart; every text
// shown goes through textContent.
/* global uPlot */
"use strict";

(() => {
  /** Points the live chart keeps (Sidekiq's realtime chart keeps 50). */
  const LIVE_POINTS = 50;
  /** Polls the live chart's time axis spans at least, so the first points start at the left edge. */
  const LIVE_MIN_SPAN = 10;
  /** Chart height, px; the width follows the container. */
  const HEIGHT = 220;
  const COLORS = { processed: "#2563eb", failed: "#b1003e" };
  /** Whole-number steps for the count axis: a count of jobs is never 0.5. */
  const COUNT_STEPS = [1, 2, 5].flatMap((m) => [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8].map((p) => m * p));
  COUNT_STEPS.sort((a, b) => a - b);
  const DAY = 86_400; // seconds
  /** Whole days for the history's ticks (uPlot aligns 30 and 365 days to months and years). */
  const DAY_STEPS = [1, 2, 7, 14, 30, 90, 180, 365].map((d) => d * DAY);
  /** Least room between x ticks, px: a label ("12:04:10", "Nov 21") plus a gap. */
  const X_SPACE = 70;

  const count = (v) => (v == null ? "–" : v.toLocaleString("en-US"));

  /**
   * A uPlot chart of processed and failed over time in `el`. `xFormat` is an fmtDate template for the
   * axis ticks and `xValue` the one for the legend; `span(min, max)` may widen the x range (seconds).
   * The x labels drawn last are kept in `data-x-labels`, as text, for tools that cannot read a canvas.
   */
  function timeChart(el, { data, xLabel, yLabel, xFormat, xValue, xSteps, span }) {
    const tick = uPlot.fmtDate(xFormat);
    const series = (name) => ({ label: name, stroke: COLORS[name], width: 2, value: (u, v) => count(v) });
    const opts = {
      width: el.clientWidth || 800,
      height: HEIGHT,
      series: [{ label: "time", value: xValue }, series("processed"), series("failed")],
      scales: {
        x: { time: true, range: span ? (u, min, max) => span(min, max) : undefined },
        // From 0, never a range of zero: an idle minute draws a flat line at the bottom, not mid-chart.
        y: { range: (u, min, max) => uPlot.rangeNum(0, Math.max(1, max ?? 1), 0.1, true) },
      },
      axes: [
        {
          label: xLabel,
          space: X_SPACE,
          incrs: xSteps,
          values: (u, splits) => {
            const labels = splits.map((s) => tick(new Date(s * 1000)));
            el.dataset.xLabels = JSON.stringify(labels);
            return labels;
          },
        },
        { label: yLabel, incrs: COUNT_STEPS, size: 64, values: (u, splits) => splits.map(count) },
      ],
    };
    // The chart follows its container's width; the observer ends with the chart (a new live interval).
    const observer = new ResizeObserver(() => chart.setSize({ width: el.clientWidth || 800, height: HEIGHT }));
    opts.hooks = { destroy: [() => observer.disconnect()] };
    const chart = new uPlot(opts, data, el);
    observer.observe(el);
    return chart;
  }

  /** Shows `text` where the chart would be (no chart library, no data yet, nothing in the period). */
  function note(el, text) {
    const p = document.createElement("p");
    p.className = "chart-note muted";
    p.textContent = text;
    el.replaceChildren(p);
  }

  function setupHistory() {
    const el = document.getElementById("history-chart");
    if (!el || !el.dataset.series) return;
    if (typeof uPlot !== "function") return note(el, "The chart library did not load (see the server log).");
    const { dates = [], processed = [], failed = [] } = JSON.parse(el.dataset.series);
    // Sidekiq's daily counters are UTC days named YYYY-MM-DD; each is drawn at the local midnight of the
    // same calendar date, so the label reads the day the counter names in every time zone.
    const days = dates.map((d) => /^(\d{4})-(\d{2})-(\d{2})$/.exec(d));
    const x = days.map((m) => (m ? new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3])).getTime() / 1000 : null));
    const keep = x.map((v, i) => v !== null && typeof processed[i] === "number" && typeof failed[i] === "number");
    const pick = (list) => list.filter((_, i) => keep[i]);
    if (!keep.some(Boolean)) return note(el, "No days to show.");
    el.replaceChildren();
    timeChart(el, {
      data: [pick(x), pick(processed), pick(failed)],
      xLabel: "day (UTC counters)",
      yLabel: "jobs per day",
      xFormat: "{MMM} {D}",
      xValue: "{YYYY}-{MM}-{DD}",
      xSteps: DAY_STEPS,
    });
  }

  /** The /stream events drawn per poll, and the summary cards kept current. */
  function setupLive() {
    const el = document.getElementById("live-chart");
    if (!el) return;
    const status = document.getElementById("live-status");
    const slider = document.getElementById("interval");
    const shown = document.getElementById("interval-value");
    const charted = typeof uPlot === "function";
    // x: seconds since the epoch (the browser's clock when the poll arrived); y: jobs in the interval.
    let data = [[], [], []];
    let chart = null;
    let last = null;
    let source = null;

    const intervalS = () => Number(slider.value);
    const draw = () => {
      el.dataset.points = String(data[1].filter((v) => v !== null).length);
      el.dataset.lastProcessed = String(data[1].at(-1) ?? 0);
      if (!charted) return;
      if (chart) return chart.setData(data);
      el.replaceChildren();
      chart = timeChart(el, {
        data,
        xLabel: "local time",
        yLabel: `jobs per ${intervalS()} s`,
        xFormat: "{HH}:{mm}:{ss}",
        xValue: "{HH}:{mm}:{ss}",
        span: (min, max) => (min == null ? [min, max] : [min, Math.max(max, min + LIVE_MIN_SPAN * intervalS())]),
      });
    };
    const reset = () => {
      // One chart, one unit: a new interval starts a new chart rather than mix "per 2 s" with "per 20 s".
      data = [[], [], []];
      last = null;
      chart?.destroy();
      chart = null;
      note(el, charted ? "Waiting for the first numbers…" : "The chart library did not load (see the server log).");
    };
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
        // The first poll starts the time axis; its point has no value yet (a count per interval needs
        // the previous poll), so the first value appears one interval later.
        const x = Date.now() / 1000;
        data[0].push(x);
        data[1].push(last ? Math.max(0, s.processed - last.processed) : null);
        data[2].push(last ? Math.max(0, s.failed - last.failed) : null);
        if (data[0].length > LIVE_POINTS) for (const list of data) list.shift();
        last = s;
        draw();
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
    slider.addEventListener("change", () => {
      reset();
      open();
    });
    // A hidden tab asks nothing of Redis: the stream closes and reopens when the tab is shown again.
    // The poll after a pause has no previous one to count from: it starts a gap, not a spike.
    const pause = () => {
      last = null;
      close("paused (tab hidden)");
    };
    document.addEventListener("visibilitychange", () => (document.hidden ? pause() : open()));
    reset();
    if (!document.hidden) open();
    else pause();
  }

  document.addEventListener("DOMContentLoaded", () => {
    setupHistory();
    setupLive();
  });
})();
