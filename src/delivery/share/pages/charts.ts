import { type Html, html, formatNumber as n, plural, type SafeHtml } from "./html.js";
import { dataTable } from "./layout.js";
import { PALETTE } from "./style.js";

/**
 * Inline SVG charts. Each is an image with a title and a description for screen readers, followed
 * by the same numbers as a table, so no value is only a bar length or a colour. Sizes are in
 * viewBox units and the `.chart` class scales the SVG to its column, phones included; colours are
 * presentation attributes, which the CSP allows where it forbids `style`.
 */

export const SIDES = ["complaint", "praise", "request", "neutral", "mixed"] as const;
export type ChartSide = (typeof SIDES)[number];

const SIDE_NAME: Record<ChartSide, string> = {
  complaint: "Complaints",
  praise: "Praise",
  request: "Requests",
  neutral: "Neutral",
  mixed: "Mixed",
};

export interface ThemeBar {
  label: string;
  counts: Partial<Record<ChartSide, number>>;
}

const WIDTH = 400;
const FONT = 15;
// Roughly 8 units a character at 15 units: a label longer than this would run into the total.
const LABEL_CHARS = 40;

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text);
const total = (t: ThemeBar) => SIDES.reduce((sum, side) => sum + (t.counts[side] ?? 0), 0);
const fmt = (x: number) => Number(x.toFixed(1));

/** A pattern per side on top of its colour, so sides differ in print and for readers who do not see the colours apart. */
function sidePatterns(id: string, sides: readonly ChartSide[]): SafeHtml {
  const ink = html`fill="#000000" fill-opacity="0.35"`;
  const marks: Record<ChartSide, SafeHtml | null> = {
    complaint: null,
    praise: html`<rect width="3" height="8" ${ink}/>`,
    request: html`<circle cx="4" cy="4" r="1.6" ${ink}/>`,
    neutral: html`<rect width="8" height="2" ${ink}/>`,
    mixed: html`<rect width="2" height="8" ${ink}/><rect width="8" height="2" ${ink}/>`,
  };
  return html`<defs>${sides.map(
    (side) =>
      html`<pattern id="${id}-${side}" width="8" height="8" patternUnits="userSpaceOnUse"${side === "praise" || side === "mixed" ? html` patternTransform="rotate(45)"` : ""}><rect width="8" height="8" fill="${PALETTE[side]}"/>${marks[side]}</pattern>`,
  )}</defs>`;
}

function legend(items: { swatch: SafeHtml; label: string }[]): SafeHtml {
  return html`<ul class="legend">${items.map(
    (i) => html`<li><svg viewBox="0 0 16 16" aria-hidden="true" focusable="false">${i.swatch}</svg>${i.label}</li>`,
  )}</ul>`;
}

function chartData(caption: string, table: SafeHtml): SafeHtml {
  return html`<details><summary>Chart data<span class="visually-hidden">: ${caption}</span></summary>${table}</details>`;
}

/** Horizontal bars, one row per theme (label above its bar), split into one segment per side. */
export function themeBarChart(themes: ThemeBar[], options: { id?: string; title?: string } = {}): SafeHtml {
  const id = options.id ?? "themes-chart";
  const title = options.title ?? "Sources per theme, by side";
  if (themes.length === 0) return html`<p>No themes to chart.</p>`;
  // The three sides a reader compares are always listed; neutral and mixed only when some theme has them.
  const sides = SIDES.filter((side) => (side !== "neutral" && side !== "mixed") || themes.some((t) => (t.counts[side] ?? 0) > 0));
  const max = Math.max(1, ...themes.map(total));
  const rowHeight = 48;
  const height = themes.length * rowHeight;
  const rows = themes.map((theme, i) => {
    const y = i * rowHeight;
    let x = 0;
    const segments: SafeHtml[] = [];
    for (const side of sides) {
      const count = theme.counts[side] ?? 0;
      if (count <= 0) continue;
      // A sliver would vanish on a phone; two units keeps every non-zero side visible.
      const w = Math.max(2, (count / max) * WIDTH);
      segments.push(
        html`<rect x="${fmt(x)}" y="${y + 24}" width="${fmt(w)}" height="16" fill="url(#${id}-${side})" stroke="${PALETTE.background}" stroke-width="1"><title>${theme.label}: ${plural(count, "source")} (${SIDE_NAME[side].toLowerCase()})</title></rect>`,
      );
      x += w;
    }
    return html`<g><text x="0" y="${y + 17}" font-size="${FONT}" fill="${PALETTE.text}">${clip(theme.label, LABEL_CHARS)}</text><text x="${WIDTH}" y="${y + 17}" font-size="${FONT}" fill="${PALETTE.muted}" text-anchor="end">${n(total(theme))}</text>${segments}</g>`;
  });
  const top = themes.reduce((a, b) => (total(b) > total(a) ? b : a));
  const desc = `${plural(themes.length, "theme")}, each a bar split into ${sides.map((s) => SIDE_NAME[s].toLowerCase()).join(", ")}. The largest is ${top.label} with ${plural(total(top), "source")}. The table below gives every number.`;
  const table = dataTable({
    caption: title,
    rows: themes,
    columns: [
      { header: "Theme", cell: (t) => t.label, rowHeader: true },
      ...sides.map((side) => ({ header: SIDE_NAME[side], cell: (t: ThemeBar) => n(t.counts[side] ?? 0), numeric: true })),
      { header: "Total", cell: (t) => n(total(t)), numeric: true },
    ],
  });
  return html`<figure class="chart-figure">
<svg class="chart" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="${id}-title ${id}-desc"><title id="${id}-title">${title}</title><desc id="${id}-desc">${desc}</desc>${sidePatterns(id, sides)}${rows}</svg>
${legend(sides.map((side) => ({ swatch: html`<rect width="16" height="16" fill="url(#${id}-${side})"/>`, label: SIDE_NAME[side] })))}
</figure>
${chartData(title, table)}`;
}

export interface VolumeChartPoint {
  /** Start of the bucket, YYYY-MM-DD. */
  start: string;
  sources: number;
  comments: number;
}

/** The smallest 1, 2 or 5 × 10^k at or above the value: axis labels people can read at a glance. */
function niceCeil(value: number): number {
  if (value <= 0) return 1;
  const step = 10 ** Math.floor(Math.log10(value));
  for (const m of [1, 2, 5, 10]) if (m * step >= value) return m * step;
  return 10 * step;
}

const LINES = [
  { key: "sources", name: "Sources", color: PALETTE.request, dash: null },
  { key: "comments", name: "Comments", color: PALETTE.complaint, dash: "6 4" },
] as const;

/** Sources (solid) and comments (dashed) per bucket, oldest on the left. */
export function volumeLineChart(points: VolumeChartPoint[], options: { id?: string; bucket?: "day" | "week" } = {}): SafeHtml {
  const id = options.id ?? "volume-chart";
  const per = options.bucket ?? "day";
  const title = `Sources and comments per ${per}`;
  const first = points[0];
  const last = points.at(-1);
  if (first === undefined || last === undefined) return html`<p>No volume recorded in these windows.</p>`;
  const max = niceCeil(Math.max(...points.map((p) => Math.max(p.sources, p.comments))));
  // The y labels sit left of the plot; room for the widest ("10,000") keeps them inside the viewBox.
  const left = Math.max(32, Math.ceil(n(max).length * 8.5) + 10);
  const [right, top, bottom, height] = [12, 12, 44, 240];
  const plotW = WIDTH - left - right;
  const plotH = height - top - bottom;
  const xOf = (i: number) => left + (points.length === 1 ? plotW / 2 : (i / (points.length - 1)) * plotW);
  const yOf = (v: number) => top + plotH - (v / max) * plotH;
  const grid = [0, max / 2, max].map(
    (v) =>
      html`<line x1="${left}" x2="${WIDTH - right}" y1="${fmt(yOf(v))}" y2="${fmt(yOf(v))}" stroke="${v === 0 ? PALETTE.axis : PALETTE.grid}" stroke-width="1"/><text x="${left - 6}" y="${fmt(yOf(v) + 5)}" font-size="${FONT}" fill="${PALETTE.muted}" text-anchor="end">${n(v)}</text>`,
  );
  const middle = points[Math.floor((points.length - 1) / 2)] as VolumeChartPoint;
  const ticks: [VolumeChartPoint, number, string][] =
    points.length === 1
      ? [[first, 0, "middle"]]
      : [
          [first, 0, "start"],
          [middle, Math.floor((points.length - 1) / 2), "middle"],
          [last, points.length - 1, "end"],
        ];
  const xLabels = ticks.map(
    ([p, i, anchor]) =>
      html`<text x="${fmt(xOf(i))}" y="${height - bottom + 22}" font-size="${FONT}" fill="${PALETTE.muted}" text-anchor="${anchor}">${p.start}</text>`,
  );
  const lines = LINES.map((line) => {
    const stroke = html`stroke="${line.color}" stroke-width="2.5"${line.dash ? html` stroke-dasharray="${line.dash}"` : ""}`;
    if (points.length === 1) return html`<circle cx="${fmt(xOf(0))}" cy="${fmt(yOf(first[line.key]))}" r="4" fill="${line.color}"/>`;
    const coords = points.map((p, i) => `${fmt(xOf(i))},${fmt(yOf(p[line.key]))}`).join(" ");
    return html`<polyline points="${coords}" fill="none" ${stroke} stroke-linejoin="round"/>`;
  });
  const peak = (key: "sources" | "comments") => points.reduce((a, b) => (b[key] > a[key] ? b : a));
  const describe = (key: "sources" | "comments", name: string) =>
    `${name}: highest ${n(peak(key)[key])} (${per} of ${peak(key).start}), latest ${n(last[key])}.`;
  const desc = `${plural(points.length, per)} from ${first.start} to ${last.start}. ${describe("sources", "Sources")} ${describe("comments", "Comments")}`;
  const table = dataTable({
    caption: title,
    rows: points,
    columns: [
      { header: `${per === "day" ? "Day" : "Week starting"}`, cell: (p) => p.start, rowHeader: true },
      { header: "Sources", cell: (p) => n(p.sources), numeric: true },
      { header: "Comments", cell: (p) => n(p.comments), numeric: true },
    ],
  });
  const swatch = (line: (typeof LINES)[number]): SafeHtml =>
    html`<line x1="0" x2="16" y1="8" y2="8" stroke="${line.color}" stroke-width="3"${line.dash ? html` stroke-dasharray="4 2"` : ""}/>`;
  const body: Html = [grid, xLabels, lines];
  return html`<figure class="chart-figure">
<svg class="chart" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="${id}-title ${id}-desc"><title id="${id}-title">${title}</title><desc id="${id}-desc">${desc}</desc>${body}</svg>
${legend(LINES.map((line) => ({ swatch: swatch(line), label: `${line.name}${line.dash ? " (dashed)" : ""}` })))}
</figure>
${chartData(title, table)}`;
}
