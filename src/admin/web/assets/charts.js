// The time charts, drawn with uPlot (served from the package as /assets/uplot.min.js): the Dashboard's
// History (processed and failed per day) and Live (per poll of the /stream events), and the Metrics
// page's run time per bucket of the top classes. Each has a time axis in the browser's local time, a
// value axis with its unit, a legend naming its series, and a message instead of a chart when there is
// nothing to draw. Only numbers reach a chart; every text shown goes through textContent. The tick labels
// drawn last are kept in `data-x-labels` / `data-y-labels` and the axis titles in `data-x-title` /
// `data-y-title`, as text, for tools that cannot read a canvas.
/* global uPlot */
"use strict";

(() => {
  /** Points the live chart keeps (Sidekiq's realtime chart keeps 50). */
  const LIVE_POINTS = 50;
  /** Polls the live chart's time axis spans at least, so the first points start at the left edge. */
  const LIVE_MIN_SPAN = 10;
  /** Chart height, px; the width follows the container. */
  const HEIGHT = 220;
  /** Series colours, in order; the same as the Metrics table's swatches (web.css `.s0`..`.s4`). */
  const PALETTE = ["#2563eb", "#b1003e", "#15803d", "#a15c00", "#7c3aed"];
  /** Whole-number steps for the count axis: a count of jobs is never 0.5. */
  const COUNT_STEPS = [1, 2, 2.5, 5].flatMap((m) => [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8].map((p) => m * p));
  COUNT_STEPS.splice(COUNT_STEPS.indexOf(2.5), 1); // 25, 250, ... but never 2.5 jobs
  COUNT_STEPS.sort((a, b) => a - b);
  const DAY = 86_400; // seconds
  /** Whole days for the history's ticks (uPlot aligns 30 and 365 days to months and years). */
  const DAY_STEPS = [1, 2, 7, 14, 30, 90, 180, 365].map((d) => d * DAY);
  /** Whole seconds and minutes for the live chart's ticks: a label to the second never repeats. */
  const SECOND_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];
  /** Whole minutes for the Metrics chart's ticks (seconds). */
  const MINUTE_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440].map((m) => m * 60);
  /** Least room between x ticks, px: a label ("12:04:10", "Nov 21") plus a gap. */
  const X_SPACE = 70;
  const LIBRARY_MISSING = "The chart library did not load (see the server log).";

  const count = (v) => (v == null ? "–" : v.toLocaleString("en-US"));

  /** Milliseconds per unit, largest first: a duration is shown in the largest unit it reaches. */
  const UNITS = [
    ["h", 3_600_000],
    ["min", 60_000],
    ["s", 1000],
    ["ms", 1],
    ["µs", 0.001],
  ];
  /** The unit for `ms`: 0.4 ms stays "0.4 ms", 0.012 ms becomes "12 µs" (never a "0"). */
  const unitOf = (ms) => UNITS.find(([, size]) => Math.abs(ms) >= size * (size === 1 ? 0.1 : 1)) ?? UNITS.at(-1);
  /** `ms` in `unit` ([name, size]), to 3 significant digits: "0.4 ms", "12 µs", "1.25 s". */
  const inUnit = (ms, [name, size]) =>
    `${(ms / size).toLocaleString("en-US", { maximumSignificantDigits: 3 })} ${name}`;
  const duration = (ms) => (ms == null ? "–" : ms === 0 ? "0" : inUnit(ms, unitOf(ms)));

  /**
   * A uPlot chart of `series` ({ label, color }) over time in `el`. `xFormat` is an fmtDate template for
   * the axis ticks and `xValue` the one for the legend; `xRange()` fixes the x range (seconds); `yValue`
   * formats a value and `yTicks(splits)` the value axis's ticks.
   */
  function timeChart(el, opts) {
    const { data, series, xLabel, yLabel, xFormat, xValue, xSteps, xRange, yValue = count, ySteps } = opts;
    const tick = uPlot.fmtDate(xFormat);
    const yTicks = opts.yTicks ?? ((splits) => splits.map(count));
    el.dataset.xTitle = xLabel;
    el.dataset.yTitle = yLabel;
    const chartOpts = {
      width: el.clientWidth || 800,
      height: HEIGHT,
      series: [
        { label: "time", value: xValue },
        ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, value: (u, v) => yValue(v) })),
      ],
      scales: {
        x: { time: true, range: xRange ? () => xRange() : undefined },
        // From 0, never a range of zero: an idle minute draws a flat line at the bottom, not mid-chart.
        y: { range: (u, min, max) => uPlot.rangeNum(0, Math.max(opts.yMin ?? 1, max ?? 1), 0.1, true) },
      },
      axes: [
        {
          label: xLabel,
          space: opts.xSpace ?? X_SPACE,
          incrs: xSteps,
          values: (u, splits) => {
            const labels = splits.map((s) => tick(new Date(s * 1000)));
            el.dataset.xLabels = JSON.stringify(labels);
            return labels;
          },
        },
        {
          label: yLabel,
          incrs: ySteps,
          size: 70,
          values: (u, splits) => {
            const labels = yTicks(splits);
            el.dataset.yLabels = JSON.stringify(labels);
            return labels;
          },
        },
      ],
      hooks: opts.hooks ?? {},
    };
    // The chart follows its container's width; the observer ends with the chart (a new live interval).
    const observer = new ResizeObserver(() => chart.setSize({ width: el.clientWidth || 800, height: HEIGHT }));
    chartOpts.hooks.destroy = [() => observer.disconnect()];
    const chart = new uPlot(chartOpts, data, el);
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

  /** A message laid over a drawn chart (its plot area), shown or hidden as the data says. */
  function overlay(chart) {
    const p = document.createElement("p");
    p.className = "chart-empty muted";
    p.hidden = true;
    chart.over.appendChild(p);
    return p;
  }

  function setupHistory() {
    const el = document.getElementById("history-chart");
    if (!el || !el.dataset.series) return;
    if (typeof uPlot !== "function") return note(el, LIBRARY_MISSING);
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
      series: [
        { label: "processed", color: PALETTE[0] },
        { label: "failed", color: PALETTE[1] },
      ],
      xLabel: "day (UTC counters)",
      yLabel: "jobs per day",
      xFormat: "{MMM} {D}",
      xValue: "{YYYY}-{MM}-{DD}",
      xSteps: DAY_STEPS,
      ySteps: COUNT_STEPS,
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
    let empty = null;
    let last = null;
    let source = null;

    const intervalS = () => Number(slider.value);
    const waiting = () =>
      `No numbers yet: processed and failed jobs per ${intervalS()} s appear one interval after the first poll.`;
    const draw = () => {
      const values = [...data[1], ...data[2]].filter((v) => v !== null);
      el.dataset.points = String(data[1].filter((v) => v !== null).length);
      el.dataset.lastProcessed = String(data[1].at(-1) ?? 0);
      if (!charted) return;
      // A chart needs a value: before the second poll there is none, and an axis of nothing reads nothing.
      if (values.length === 0) return chart ? undefined : note(el, waiting());
      if (!chart) {
        el.replaceChildren();
        chart = timeChart(el, {
          data,
          series: [
            { label: "processed", color: PALETTE[0] },
            { label: "failed", color: PALETTE[1] },
          ],
          xLabel: "local time",
          yLabel: `jobs per ${intervalS()} s`,
          xFormat: "{HH}:{mm}:{ss}",
          xValue: "{HH}:{mm}:{ss}",
          xSteps: SECOND_STEPS,
          // From the first poll kept, at least LIVE_MIN_SPAN polls wide, to the last one.
          xRange: () => [data[0][0], Math.max(data[0].at(-1), data[0][0] + LIVE_MIN_SPAN * intervalS())],
          ySteps: COUNT_STEPS,
        });
        empty = overlay(chart);
      } else chart.setData(data);
      const idle = values.every((v) => v === 0);
      empty.hidden = !idle;
      empty.textContent = idle ? `No job processed or failed in the last ${values.length / 2} polls.` : "";
    };
    const reset = () => {
      // One chart, one unit: a new interval starts a new chart rather than mix "per 2 s" with "per 20 s".
      data = [[], [], []];
      last = null;
      chart?.destroy();
      chart = null;
      note(el, charted ? waiting() : LIBRARY_MISSING);
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

  /**
   * Metrics: run time per bucket of the top classes (ms), coloured as their swatches in the table, with
   * each deploy mark as a dashed line whose label is text in the chart's overlay.
   */
  function setupMetrics() {
    const el = document.getElementById("metrics-chart");
    if (!el || !el.dataset.series) return;
    if (typeof uPlot !== "function") return note(el, LIBRARY_MISSING);
    const { buckets = [], series = [], marks = [], bucketSeconds = 60 } = JSON.parse(el.dataset.series);
    const x = buckets.map((iso) => Date.parse(iso) / 1000);
    const lines = series.filter((s) => Array.isArray(s.values) && s.values.length === x.length);
    if (x.length === 0 || x.some((v) => !Number.isFinite(v)) || lines.length === 0)
      return note(el, "No job ran in this period.");
    const spanS = x.at(-1) - x[0];
    const perBucket = bucketSeconds === 60 ? "minute" : `${bucketSeconds / 60} minutes`;
    const max = Math.max(0, ...lines.flatMap((s) => s.values));
    const unit = unitOf(max || 1);
    let labels = [];
    el.replaceChildren();
    const chart = timeChart(el, {
      data: [x, ...lines.map((s) => s.values)],
      series: lines.map((s, i) => ({ label: s.name, color: PALETTE[i % PALETTE.length] })),
      xLabel: "local time",
      yLabel: `run time per ${perBucket} (${unit[0]})`,
      // Past a day the hour repeats: the date goes into the label.
      xFormat: spanS > 20 * 3600 ? "{MMM} {D} {HH}:{mm}" : "{HH}:{mm}",
      xValue: "{YYYY}-{MM}-{DD} {HH}:{mm}",
      xSteps: MINUTE_STEPS,
      xSpace: spanS > 20 * 3600 ? 120 : X_SPACE,
      yValue: duration,
      yMin: unit[1],
      yTicks: (splits) => splits.map((ms) => (ms === 0 ? "0" : inUnit(ms, unit))),
      hooks: { draw: [(u) => placeMarks(u, labels)] },
    });
    labels = marks
      .filter((m) => Number.isFinite(m.at) && typeof m.label === "string")
      .map((m) => {
        const div = document.createElement("div");
        div.className = "mark";
        div.title = `deploy: ${m.label}`;
        div.textContent = m.label.slice(0, 24);
        div.dataset.at = String(m.at);
        chart.over.appendChild(div);
        return div;
      });
    placeMarks(chart, labels);
  }

  /** Puts each deploy mark at its time; one outside the drawn range is hidden. */
  function placeMarks(u, labels) {
    for (const div of labels ?? []) {
      const left = u.valToPos(Number(div.dataset.at), "x");
      div.hidden = !(left >= 0 && left <= u.over.clientWidth);
      div.style.left = `${left}px`;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    setupHistory();
    setupLive();
    setupMetrics();
  });
})();
