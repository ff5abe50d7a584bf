import type { EvidenceItem, InsightItem, ResultData } from "../../../insights/analysis/schemas.js";
import { type ThemeBar, themeBarChart } from "./charts.js";
import {
  dateTag,
  externalLink,
  formatNumber,
  formatPercent,
  type Html,
  html,
  paragraphs,
  plural,
  type SafeHtml,
  timeTag,
  words,
} from "./html.js";
import { dataTable, facts, list, page, quoteFigure, section } from "./layout.js";
import { LIVE_SCRIPT_SRC } from "./live.js";
import type { AnalysisPageModel } from "./model.js";

/**
 * A shared analysis: the question, and once it has finished the answer with each `[n]` linked to
 * its quote further down the page, the themes as a chart, every insight with its quotes, coverage
 * and limitations. While it runs, a live region the script in live.ts fills from the event stream.
 */

const STATUS: Record<string, string> = {
  queued: "Queued",
  running: "Running",
  completed: "Completed",
  partial: "Partial result",
  failed: "Failed",
  cancelled: "Cancelled",
};

export const POLARITY: Record<InsightItem["polarity"], string> = {
  complaint: "Complaints",
  praise: "Praise",
  mixed: "Mixed views",
  request: "Feature requests",
  neutral: "Mentioned without a clear opinion",
};

const quoteId = (n: number) => `q-${n}`;

/** `[n]` becomes a link only when a quote with that number is on the page; anything else stays text. */
function linkCitations(text: string, targets: ReadonlySet<number>): SafeHtml {
  const parts: Html[] = [];
  let last = 0;
  for (const m of text.matchAll(/\[(\d{1,9})\]/g)) {
    const n = Number(m[1]);
    if (!targets.has(n)) continue;
    parts.push(text.slice(last, m.index), html`<a class="cite" href="#${quoteId(n)}">[${n}]</a>`);
    last = m.index + m[0].length;
  }
  parts.push(text.slice(last));
  return html`${parts}`;
}

/**
 * One bar per aspect: the two insights of a split aspect carry the same per-side counts, so charting
 * each would draw the aspect twice. An insight without counts (a language model's) is its own bar
 * with its sources on its side.
 */
function themeBars(insights: readonly InsightItem[]): ThemeBar[] {
  const seen = new Set<string>();
  const bars: ThemeBar[] = [];
  for (const i of insights) {
    if (i.counts && i.aspect !== null) {
      if (seen.has(i.aspect)) continue;
      seen.add(i.aspect);
      // Extractive titles read "Sync — complaints (3 sources)"; the part before the dash names the aspect.
      const label = i.title.includes(" — ") ? (i.title.split(" — ")[0] as string) : i.aspect;
      bars.push({ label, counts: { ...i.counts } });
    } else {
      bars.push({ label: i.title, counts: { [i.polarity]: i.sources } });
    }
  }
  return bars;
}

/** Renders quotes in page order; the first occurrence of a number carries its id so ids stay unique. */
class QuoteIds {
  private readonly placed = new Set<number>();
  take(n: number): string | null {
    if (this.placed.has(n)) return null;
    this.placed.add(n);
    return quoteId(n);
  }
}

/** Why a citation's words are gone (src/governance/deletion): its original was deleted, or its author forgotten. */
export const REMOVED: Record<string, string> = {
  deleted: "The source of this quote was deleted",
  author_erased: "The author of this quote asked to be forgotten",
  retention: "The source of this quote passed the workspace's retention period",
  workspace_deleted: "The source of this quote was deleted with its workspace",
};

function evidenceQuote(e: EvidenceItem, ids: QuoteIds): SafeHtml {
  if (e.unavailable) {
    return quoteFigure({
      id: ids.take(e.number),
      quote: html`<span class="muted">${REMOVED[e.unavailable.reason] ?? "This quote is no longer available"} (${dateTag(e.unavailable.at)}).</span>`,
      caption: [html`<span class="quote-number">[${e.number}]</span>`, e.platform],
    });
  }
  return quoteFigure({
    id: ids.take(e.number),
    quote: e.quote,
    caption: [
      html`<span class="quote-number">[${e.number}]</span>`,
      e.platform,
      e.author,
      dateTag(e.published_at),
      e.feedback_kind && words(e.feedback_kind),
      e.url && externalLink(e.url, "original"),
    ],
  });
}

function insightArticle(insight: InsightItem, index: number, ids: QuoteIds, sharePath: string | null): SafeHtml {
  const id = `insight-${index + 1}`;
  const analysed =
    insight.sources_analysed !== undefined && insight.sources_analysed !== insight.sources
      ? ` (${formatNumber(insight.sources_analysed)} in the analysed sample)`
      : "";
  // The page of every source behind the insight, under the same link.
  const all =
    sharePath &&
    html`<p><a class="all-sources" href="${sharePath}/insights/${insight.id ?? index + 1}">${insight.sources === 1 ? "The source behind this theme" : `All ${plural(insight.sources, "source")} behind this theme`}</a></p>`;
  return html`<article class="insight" id="${id}" aria-labelledby="${id}-heading">
<h3 id="${id}-heading">${insight.title}</h3>
<p class="meta">${POLARITY[insight.polarity]} · ${plural(insight.sources, "source")}${analysed} · confidence ${formatPercent(insight.confidence)}</p>
${paragraphs(insight.summary)}
${insight.evidence.map((e) => evidenceQuote(e, ids))}
${all}
</article>
`;
}

function resultSections(data: ResultData, partial: boolean, sharePath: string | null): { nav: [string, string][]; body: SafeHtml } {
  const ids = new QuoteIds();
  const inInsights = new Set(data.insights.flatMap((i) => i.evidence.map((e) => e.number)));
  // Cited quotes that no insight shows still need a target for their [n] links.
  const others = data.evidence.filter((e, i, all) => !inInsights.has(e.number) && all.findIndex((x) => x.number === e.number) === i);
  const targets = new Set([...inInsights, ...others.map((e) => e.number)]);
  const coverage = Object.entries(data.coverage);
  const nav: [string, string][] = [
    ["answer", "Answer"],
    ["themes", "Themes"],
    ["insights", "Insights"],
  ];
  if (others.length > 0) nav.push(["other-quotes", "Other quotes"]);
  nav.push(["coverage", "Coverage"], ["limitations", "Limitations"]);
  const body = html`${
    partial &&
    html`<p class="note" role="note">This result is partial: the analysis stopped before it covered everything in scope. The limitations below say what is missing.</p>`
  }
${section(
  "answer",
  "Answer",
  paragraphs(data.answer, (p) => linkCitations(p, targets)),
)}
${section("themes", "Themes", themeBarChart(themeBars(data.insights), { id: "themes-chart", title: "Sources per theme, by side" }))}
${section(
  "insights",
  "Insights",
  data.insights.length === 0 ? html`<p class="muted">No insights.</p>` : data.insights.map((i, k) => insightArticle(i, k, ids, sharePath)),
)}
${
  others.length > 0 &&
  section(
    "other-quotes",
    "Other quotes",
    others.map((e) => evidenceQuote(e, ids)),
  )
}
${section(
  "coverage",
  "Coverage",
  dataTable({
    caption: "Sources per platform",
    rows: coverage,
    columns: [
      { header: "Platform", cell: ([platform]) => platform, rowHeader: true },
      { header: "In scope", cell: ([, c]) => formatNumber(c.in_scope), numeric: true },
      { header: "Retrieved", cell: ([, c]) => formatNumber(c.retrieved), numeric: true },
      { header: "Cited", cell: ([, c]) => formatNumber(c.cited), numeric: true },
    ],
    empty: "No coverage recorded.",
  }),
)}
${section("limitations", "Limitations", list(data.limitations, "None recorded."))}`;
  return { nav, body };
}

function liveRegion(eventsPath: string, status: string): SafeHtml {
  const waiting = status === "queued" ? "The analysis is queued." : "The analysis is running.";
  return section(
    "progress",
    "Progress",
    html`<div class="live" data-events="${eventsPath}">
<progress max="1" aria-label="Analysis progress"></progress>
<p class="live-status" data-live-status role="status" aria-live="polite">${waiting} This page updates as it runs.</p>
<button type="button" data-live-reload hidden>Reload the page</button>
<noscript><p>This page cannot update itself without JavaScript: reload it later to see the result.</p></noscript>
<h3 data-live-quotes-heading hidden>Quotes found so far</h3>
<ol class="live-quotes" data-live-quotes></ol>
</div>`,
  );
}

export function renderAnalysisPage(model: AnalysisPageModel): string {
  const a = model.analysis;
  const data = a.result?.data ?? null;
  const running = a.status === "queued" || a.status === "running";
  const live = running && model.eventsPath !== null;
  const result = data && resultSections(data, a.status === "partial" || a.result?.status === "partial", model.sharePath ?? null);
  const stopped =
    (a.status === "failed" || a.status === "cancelled") &&
    section(
      "stopped",
      a.status === "failed" ? "The analysis failed" : "The analysis was cancelled",
      html`<p>${a.error ?? (a.status === "failed" ? "No reason was recorded." : "It was cancelled before it finished.")}</p>`,
    );
  const nav =
    result &&
    result.nav.length > 0 &&
    html`<nav class="toc" aria-label="On this page"><ul>${result.nav.map(([id, label]) => html`<li><a href="#${id}">${label}</a></li>`)}</ul></nav>`;
  const body = html`<h1>${a.question}</h1>
${facts([
  ["Subject", model.subject],
  ["Status", STATUS[a.status] ?? words(a.status)],
  ["Depth", words(a.depth)],
  ["Platforms", a.platforms.length > 0 ? a.platforms.join(", ") : "All"],
  ["Answer written by", data && (data.engine === "llm" ? "a language model, citing stored quotes" : "the extractive engine (quotes only)")],
  ["Created", timeTag(a.created_at)],
  ["Finished", timeTag(a.finished_at)],
])}
${nav}
${live && liveRegion(model.eventsPath as string, a.status)}
${running && !live && html`<p class="note" role="note">The analysis has not finished yet. Reload this page later to see the result.</p>`}
${stopped}
${result?.body}
`;
  return page({
    title: a.question,
    kind: "Shared analysis",
    body,
    frame: model.frame,
    scripts: live ? [LIVE_SCRIPT_SRC] : [],
  });
}
