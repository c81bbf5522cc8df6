// Score charts as plain SVG, no library: text goes in as text nodes (svg() never parses markup), so a
// debater's name cannot become markup. A viewBox lets the browser scale them to narrow screens.
import { h, svg } from "./dom.js";

const WIDTH = 560;
const DEFAULT_COLOUR = "#1d4ed8";

const isNumber = (v) => typeof v === "number" && Number.isFinite(v);
const fmt = (v) => (isNumber(v) ? String(Math.round(v * 10) / 10) : "none");
const clamp = (v, max) => Math.max(0, Math.min(max, v));
// Long names would run into the bars; the full one stays in the bar's tooltip and the aria-label.
const short = (s, n = 16) => (String(s).length > n ? `${String(s).slice(0, n - 1)}…` : String(s));

/**
 * Horizontal bars, one per item (scores 0..max), each with its value written after it; an item's `detail`
 * (the criterion scores behind a verdict's score) joins its tooltip.
 */
export function barChart({ items = [], max = 10, title = "Scores", width = WIDTH }) {
  const row = 28;
  // Labels get the room the longest needs, up to a share of the chart (a phone's narrow chart gives less).
  const longest = Math.max(0, ...items.map((i) => String(i.label).length));
  const [labelW, valueW, pad] = [Math.min(Math.round(width * 0.3), 24 + longest * 8), 44, 8];
  const height = Math.max(items.length, 1) * row + pad * 2;
  const plotW = width - labelW - valueW;
  const summary = items.length ? items.map((i) => `${i.label} ${fmt(i.value)}`).join(", ") : "no scores";
  const node = svg("svg", {
    class: "chart bar-chart", role: "img", viewBox: `0 0 ${width} ${height}`,
    "aria-label": `${title} (out of ${max}): ${summary}`,
  }, svg("title", {}, title));
  if (!items.length) node.append(svg("text", { x: width / 2, y: height / 2, "text-anchor": "middle" }, "No scores"));
  // Ticks behind the bars make "7 of 10" readable at a glance.
  for (let t = 0; t <= max; t += max / 5) {
    const x = labelW + (t / max) * plotW;
    node.append(svg("line", { class: "grid", x1: x, x2: x, y1: pad / 2, y2: height - pad / 2 }));
  }
  items.forEach((item, i) => {
    const y = pad + i * row;
    const w = isNumber(item.value) ? (clamp(item.value, max) / max) * plotW : 0;
    node.append(svg("g", {},
      svg("title", {}, `${item.label}: ${fmt(item.value)} of ${max}${item.detail ? ` (${item.detail})` : ""}`),
      svg("text", { x: labelW - 8, y: y + row / 2, "text-anchor": "end", "dominant-baseline": "middle" }, short(item.label, Math.max(6, Math.floor(labelW / 8)))),
      svg("rect", { x: labelW, y: y + 5, width: w, height: row - 10, rx: 3, fill: item.colour ?? DEFAULT_COLOUR }),
      svg("text", { x: labelW + w + 6, y: y + row / 2, "dominant-baseline": "middle" }, fmt(item.value)),
    ));
  });
  return node;
}

/**
 * Lines over integer x (rounds), y from 0 to yMax. A missing or non-numeric y breaks the line rather than
 * drawing it to zero. Returns a <figure> with the svg, a legend and the values as a table for screen readers.
 */
export function lineChart({ series = [], xLabel = "Round", yLabel = "Score", yMax = 10, title = "Scores" }) {
  const height = 280;
  const m = { left: 44, right: 12, top: 12, bottom: 40 };
  const plotW = WIDTH - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const xs = [...new Set(series.flatMap((s) => s.points.filter((p) => isNumber(p.y)).map((p) => p.x)))]
    .filter(isNumber).sort((a, b) => a - b);
  // One round alone still gets an axis around it, with its point in the middle.
  const [x0, x1] = xs.length ? [xs[0], xs.at(-1)] : [1, 1];
  const [lo, hi] = x0 === x1 ? [x0 - 1, x1 + 1] : [x0, x1];
  const inset = 14; // keeps the first and last markers off the axes
  const px = (x) => m.left + inset + ((x - lo) / (hi - lo)) * (plotW - 2 * inset);
  const py = (y) => m.top + plotH - (clamp(y, yMax) / yMax) * plotH;

  const node = svg("svg", {
    class: "chart line-chart", role: "img", viewBox: `0 0 ${WIDTH} ${height}`,
    "aria-label": `${title}: ${describe(series, xLabel)}`,
  }, svg("title", {}, title));
  for (let t = 0; t <= yMax; t += yMax / 5) {
    node.append(
      svg("line", { class: "grid", x1: m.left, x2: m.left + plotW, y1: py(t), y2: py(t) }),
      svg("text", { x: m.left - 6, y: py(t), "text-anchor": "end", "dominant-baseline": "middle" }, fmt(t)),
    );
  }
  // Integer ticks only; with many rounds every nth, so the labels do not collide.
  const step = Math.max(1, Math.ceil((hi - lo) / 12));
  for (let x = Math.ceil(lo); xs.length && x <= hi; x += step) {
    if (x < x0 || x > x1) continue; // the padding around a single round gets no tick
    node.append(svg("text", { x: px(x), y: m.top + plotH + 16, "text-anchor": "middle" }, String(x)));
  }
  node.append(
    svg("line", { class: "axis", x1: m.left, x2: m.left, y1: m.top, y2: m.top + plotH }),
    svg("line", { class: "axis", x1: m.left, x2: m.left + plotW, y1: m.top + plotH, y2: m.top + plotH }),
    svg("text", { x: m.left + plotW / 2, y: height - 4, "text-anchor": "middle" }, xLabel),
    svg("text", { x: 12, y: m.top + plotH / 2, "text-anchor": "middle", transform: `rotate(-90 12 ${m.top + plotH / 2})` }, yLabel),
  );
  if (!xs.length) node.append(svg("text", { x: m.left + plotW / 2, y: m.top + plotH / 2, "text-anchor": "middle" }, "No data yet"));
  series.forEach((s) => node.append(seriesGroup(s, xs, px, py)));

  const legend = h("div", { class: "legend" }, series.map((s) => {
    const swatch = h("span", { class: "swatch", "aria-hidden": "true" });
    swatch.style.setProperty("background", s.colour ?? DEFAULT_COLOUR); // CSSOM is allowed under the CSP
    return h("span", {}, swatch, s.label);
  }));
  return h("figure", { class: "chart-figure" }, node, legend, valuesTable(series, xs, xLabel, title));
}

function seriesGroup(s, xs, px, py) {
  const colour = s.colour ?? DEFAULT_COLOUR;
  const group = svg("g", { class: "series" });
  const known = xs.map((x) => s.points.find((p) => p.x === x)).filter((p) => p && isNumber(p.y));
  // Runs over consecutive x of the chart: a round this series missed is left as a gap, not bridged.
  let run = [];
  const flush = () => {
    if (run.length > 1) {
      group.append(svg("polyline", {
        points: run.map((p) => `${px(p.x)},${py(p.y)}`).join(" "),
        fill: "none", stroke: colour, "stroke-width": 2, "stroke-linejoin": "round",
      }));
    }
    run = [];
  };
  for (const x of xs) {
    const p = known.find((q) => q.x === x);
    if (p) run.push(p);
    else flush();
  }
  flush();
  for (const p of known) {
    group.append(svg("circle", { cx: px(p.x), cy: py(p.y), r: 4, fill: colour, stroke: "#fff", "stroke-width": 1 },
      svg("title", {}, `${s.label}, ${p.x}: ${fmt(p.y)}`)));
  }
  return group;
}

/** The aria-label's text: every value while they are few, else each series' first, last and range. */
function describe(series, xLabel) {
  if (!series.length) return "no data";
  return series.map((s) => {
    const known = s.points.filter((p) => isNumber(p.y));
    if (!known.length) return `${s.label} no values`;
    if (known.length <= 6) return `${s.label} ${known.map((p) => `${xLabel} ${p.x} ${fmt(p.y)}`).join(", ")}`;
    const ys = known.map((p) => p.y);
    const [first, last] = [known[0], known.at(-1)];
    return `${s.label} ${fmt(first.y)} at ${xLabel} ${first.x} to ${fmt(last.y)} at ${xLabel} ${last.x}, range ${fmt(Math.min(...ys))}–${fmt(Math.max(...ys))}`;
  }).join("; ");
}

function valuesTable(series, xs, xLabel, title) {
  const cell = (s, x) => fmt(s.points.find((p) => p.x === x)?.y);
  // Wrapped: a table is never narrower than its cells, so on its own it would widen a phone's page.
  return h("div", { class: "visually-hidden" }, h("table", {},
    h("caption", {}, title),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, xLabel), series.map((s) => h("th", { scope: "col" }, s.label)))),
    h("tbody", {}, xs.map((x) => h("tr", {}, h("th", { scope: "row" }, String(x)), series.map((s) => h("td", {}, cell(s, x)))))),
  ));
}

const CHOICE_TITLES = { for: "For", against: "Against", undecided: "Undecided" };

/**
 * The audience's swing: for each choice (for, against, undecided) its share before the debate (the pale bar) and
 * after it (the solid one), in percent, with its move in points at the end; the side that won the swing marked.
 * Coloured through the CSS variables (app.css: --vote-for, --vote-against, --vote-undecided), so dark mode
 * reaches it. Returns a <figure> with a legend and the figures as a table for screen readers.
 */
export function swingChart({ bars = [], winner = null, width = window.innerWidth < 560 ? 340 : WIDTH, title = "The audience's vote before and after the debate" }) {
  const narrow = width < 420;
  const row = 58;
  const [labelW, swingW, pad, top] = [narrow ? 100 : 104, narrow ? 52 : 84, 8, 22];
  const plotW = width - labelW - swingW - 44; // room after a full bar for its value ("100%")
  const height = top + bars.length * row + pad;
  const px = (share) => labelW + (clamp(share ?? 0, 100) / 100) * plotW;
  const pts = (v) => (isNumber(v) ? `${v > 0 ? "+" : v < 0 ? "−" : "±"}${Math.abs(Math.round(v * 10) / 10)}` : "");
  const summary = bars
    .map((b) => `${b.choice} ${fmt(b.before)}% before${isNumber(b.after) ? `, ${fmt(b.after)}% after (${pts(b.swing)} points)` : ""}`)
    .join("; ");
  const node = svg("svg", {
    class: "chart swing-chart", role: "img", viewBox: `0 0 ${width} ${height}`,
    "aria-label": `${title}: ${summary}${winner ? `; the ${winner} side wins the swing` : ""}`,
  }, svg("title", {}, title));
  for (const t of narrow ? [0, 50, 100] : [0, 25, 50, 75, 100]) {
    const x = px(t);
    node.append(
      svg("line", { class: "grid", x1: x, x2: x, y1: top - 4, y2: height - pad }),
      svg("text", { class: "tick", x, y: top - 8, "text-anchor": t === 0 ? "start" : t === 100 ? "end" : "middle" }, `${t}%`),
    );
  }
  node.append(svg("text", { class: "tick", x: width - 4, y: top - 8, "text-anchor": "end" }, narrow ? "" : "swing"));
  bars.forEach((b, i) => {
    const y = top + i * row;
    const won = winner && b.choice === winner;
    const group = svg("g", { class: `swing-row ${b.choice}${won ? " won" : ""}` });
    group.setAttribute("data-choice", b.choice);
    if (won) group.append(svg("rect", { class: "winner-band", x: 0, y: y + 2, width, height: row - 6, rx: 4 }));
    group.append(
      svg("title", {}, `${CHOICE_TITLES[b.choice]}: ${fmt(b.before)}% before${isNumber(b.after) ? `, ${fmt(b.after)}% after, ${pts(b.swing)} points` : ""}`),
      svg("text", { class: "choice", x: 6, y: y + (won ? 22 : row / 2), "dominant-baseline": "middle" }, CHOICE_TITLES[b.choice] ?? b.choice),
      won ? svg("text", { class: "wins", x: 6, y: y + 40, "dominant-baseline": "middle" }, "wins") : null,
      svg("rect", { class: "before", x: labelW, y: y + 8, width: Math.max(px(b.before) - labelW, 1), height: 16, rx: 3 }),
      svg("text", { class: "value", x: px(b.before) + 4, y: y + 16, "dominant-baseline": "middle" }, `${fmt(b.before)}%`),
    );
    if (isNumber(b.after)) {
      group.append(
        svg("rect", { class: "after", x: labelW, y: y + 28, width: Math.max(px(b.after) - labelW, 1), height: 18, rx: 3 }),
        svg("text", { class: "value", x: px(b.after) + 4, y: y + 37, "dominant-baseline": "middle" }, `${fmt(b.after)}%`),
        svg("text", { class: `swing-points${won ? " won" : ""}`, x: width - 4, y: y + row / 2, "text-anchor": "end", "dominant-baseline": "middle" }, `${pts(b.swing)}${narrow ? "" : " pts"}`),
      );
    }
    node.append(group);
  });
  const swatch = (kind) => h("span", { class: `swatch swing-key ${kind}`, "aria-hidden": "true" });
  const legend = h("div", { class: "legend" }, h("span", {}, swatch("before"), "before the debate"), h("span", {}, swatch("after"), "after it"), h("span", {}, "swing in points (after − before)"));
  const table = h("div", { class: "visually-hidden" }, h("table", {},
    h("caption", {}, title),
    h("thead", {}, h("tr", {}, ["Choice", "Before (%)", "After (%)", "Swing (points)"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, bars.map((b) => h("tr", {}, h("th", { scope: "row" }, CHOICE_TITLES[b.choice] ?? b.choice), h("td", {}, fmt(b.before)), h("td", {}, fmt(b.after)), h("td", {}, pts(b.swing))))),
  ));
  return h("figure", { class: "chart-figure swing-figure", dataset: { testid: "swing-chart" } }, node, legend, table);
}
