import type { IntelligenceSummary, Theme } from "../../../insights/intelligence/schemas.js";
import { themeBarChart, volumeLineChart } from "./charts.js";
import { dateTag, externalLink, formatPercent, html, formatNumber as n, type SafeHtml, timeTag, words } from "./html.js";
import { dataTable, facts, list, page, quoteFigure, section } from "./layout.js";
import type { EntityPageModel } from "./model.js";

/**
 * A shared entity readout: the intelligence summary of one entity over a window and the window
 * before it, with its volume over time and its latest collection jobs and analyses. Every count is
 * of originals (sources and comments), never of people, and the page says so.
 */

type ChangeItem = IntelligenceSummary["changes"]["new"][number];

const POLARITY: Record<string, string> = {
  complaint: "Complaints",
  praise: "Praise",
  mixed: "Mixed",
  request: "Requests",
  neutral: "Neutral",
};
const polarity = (p: string) => POLARITY[p] ?? words(p);

function range(w: { start: string; end: string }): SafeHtml {
  return html`${timeTag(w.start)} to ${timeTag(w.end)}`;
}

function totals(s: IntelligenceSummary): SafeHtml {
  const rows = [
    ["Sources", "sources"],
    ["Comments", "comments"],
    ["Originals with opinions", "with_opinion_units"],
    ["Opinion statements", "opinion_units"],
  ] as const;
  return dataTable({
    caption: `Totals, last ${s.window_days} days against the ${s.window_days} days before`,
    rows,
    columns: [
      { header: "Measure", cell: ([label]) => label, rowHeader: true },
      { header: "This window", cell: ([, key]) => n(s.totals.current[key]), numeric: true },
      { header: "Previous window", cell: ([, key]) => n(s.totals.previous[key]), numeric: true },
    ],
  });
}

function themeQuote(t: Theme): SafeHtml | null {
  const q = t.quotes[0];
  if (q === undefined) return null;
  return html`<h3>${t.label}</h3>${quoteFigure({
    quote: q.quote,
    caption: [words(q.side), q.platform, q.author, dateTag(q.published_at), q.url && externalLink(q.url, "original")],
  })}`;
}

function themes(s: IntelligenceSummary): SafeHtml {
  if (s.themes.length === 0) return html`<p class="muted">No themes in this window.</p>`;
  const quotes = s.themes.map(themeQuote).filter((q) => q !== null);
  return html`${themeBarChart(
    s.themes.map((t) => ({ label: t.label, counts: t.counts })),
    { id: "themes-chart", title: "Sources per theme in this window, by side" },
  )}
${dataTable({
  caption: "Top themes in this window against the previous one",
  hideCaption: true,
  rows: s.themes,
  columns: [
    { header: "Theme", cell: (t) => t.label, rowHeader: true },
    { header: "Polarity", cell: (t) => polarity(t.polarity) },
    { header: "Sources now", cell: (t) => n(t.sources), numeric: true },
    { header: "Share", cell: (t) => formatPercent(t.share), numeric: true },
    { header: "Previous window", cell: (t) => n(t.previous_sources), numeric: true },
    { header: "Change", cell: (t) => words(t.change) },
  ],
})}
${quotes.length > 0 && html`<p>One quote per theme, as the sources wrote it:</p>${quotes}`}`;
}

function changeList(items: readonly ChangeItem[]): SafeHtml {
  return list(
    items.map(
      (c) =>
        html`<strong>${c.label}</strong> (${polarity(c.polarity).toLowerCase()}): ${n(c.current_sources)} sources, ${formatPercent(c.current_share)} of this window; previously ${n(c.previous_sources)}, ${formatPercent(c.previous_share)}`,
    ),
  );
}

function changes(s: IntelligenceSummary): SafeHtml {
  return html`<h3>New</h3>${changeList(s.changes.new)}<h3>Growing</h3>${changeList(s.changes.growing)}<h3>Fading</h3>${changeList(s.changes.fading)}`;
}

function coverage(s: IntelligenceSummary): SafeHtml {
  return dataTable({
    caption: "Sources and collection coverage per platform",
    hideCaption: true,
    rows: s.platforms,
    columns: [
      { header: "Platform", cell: (p) => p.platform, rowHeader: true },
      { header: "Sources now", cell: (p) => n(p.current.sources), numeric: true },
      { header: "Sources before", cell: (p) => n(p.previous.sources), numeric: true },
      { header: "Coverage", cell: (p) => (p.coverage ? words(p.coverage.coverage_state) : "not recorded") },
      { header: "Proven", cell: (p) => (p.coverage ? (p.coverage.proven ? "yes" : "no") : "—") },
      { header: "Collected", cell: (p) => (p.coverage?.finished_at ? timeTag(p.coverage.finished_at) : "—") },
    ],
    empty: "No platforms recorded.",
  });
}

function competitors(s: IntelligenceSummary): SafeHtml {
  const gaps = s.competitor_gaps.map(
    (g) =>
      html`<strong>${g.label}</strong>: ${g.direction === "competitor_ahead" ? `${g.competitor.name} is ahead` : `${g.company.name} is ahead`} (${g.company.name}: ${n(g.company.sources)} sources, mostly ${polarity(g.company.polarity).toLowerCase()}; ${g.competitor.name}: ${n(g.competitor.sources)}, mostly ${polarity(g.competitor.polarity).toLowerCase()})`,
  );
  return html`${dataTable({
    caption: "Competitors and their sources in this window",
    hideCaption: true,
    rows: s.competitors,
    columns: [
      { header: "Competitor", cell: (c) => c.name, rowHeader: true },
      { header: "Sources now", cell: (c) => n(c.sources), numeric: true },
    ],
  })}${gaps.length > 0 && html`<h3>Where they differ</h3>${list(gaps)}`}`;
}

export function renderEntityPage(model: EntityPageModel): string {
  const s = model.summary;
  const { jobs, analyses } = model;
  const body = html`<h1>${s.entity.name} <span class="h1-kind">(${words(s.entity.kind)})</span></h1>
${facts([
  ["This window", range(s.windows.current)],
  ["Previous window", range(s.windows.previous)],
  ["Summary computed", timeTag(s.generated_at)],
])}
<p class="muted">Counts are of sources and comments, not of people.</p>
${section("totals", "Totals", totals(s))}
${section("volume", "Volume over time", volumeLineChart(model.volume.points, { id: "volume-chart", bucket: model.volume.bucket }))}
${section("themes", "Top themes", themes(s))}
${section("changes", "Changes since the previous window", changes(s))}
${section("coverage", "Coverage", coverage(s))}
${section(
  "jobs",
  "Latest collection jobs",
  dataTable({
    caption: "Latest collection jobs, newest first",
    hideCaption: true,
    rows: jobs,
    columns: [
      { header: "Created", cell: (j) => timeTag(j.created_at), rowHeader: true },
      { header: "Status", cell: (j) => words(j.status) },
      { header: "Platforms", cell: (j) => j.platforms.join(", ") },
      { header: "Finished", cell: (j) => (j.finished_at ? timeTag(j.finished_at) : "—") },
    ],
    empty: "No collection jobs yet.",
  }),
)}
${section(
  "analyses",
  "Latest analyses",
  dataTable({
    caption: "Latest analyses, newest first",
    hideCaption: true,
    rows: analyses,
    columns: [
      { header: "Question", cell: (a) => a.question, rowHeader: true },
      { header: "Status", cell: (a) => words(a.status) },
      { header: "Created", cell: (a) => timeTag(a.created_at) },
      { header: "Finished", cell: (a) => (a.finished_at ? timeTag(a.finished_at) : "—") },
    ],
    empty: "No analyses yet.",
  }),
)}
${s.competitors.length > 0 && section("competitors", "Competitors", competitors(s))}
${section("limitations", "Limitations", list(s.limitations, "None recorded."))}
`;
  return page({ title: s.entity.name, kind: "Shared entity summary", body, frame: model.frame });
}
