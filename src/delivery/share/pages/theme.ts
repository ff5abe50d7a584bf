import type { ThemeSourceItem } from "../../../insights/analysis/theme-sources-schemas.js";
import { POLARITY, REMOVED } from "./analysis.js";
import { dateTag, externalLink, formatNumber, html, paragraphs, plural, type SafeHtml, words } from "./html.js";
import { facts, page, quoteFigure, section } from "./layout.js";
import type { ThemeSourcesPageModel } from "./model.js";

/**
 * Every source behind one theme of a shared analysis (`/share/{token}/insights/{n}`), a page at a time,
 * with the quote cards of the analysis's page: each source's best statement for the theme, or why it is
 * gone. Links go back to the analysis's page, to the other order and to the next page, all under the
 * same token.
 */
const SORTS = [
  ["representative", "Most representative first"],
  ["newest", "Newest first"],
] as const;

function sourceCard(item: ThemeSourceItem, model: ThemeSourcesPageModel): SafeHtml {
  const quoted =
    item.evidence_number !== null && html`<a href="${model.sharePath}#q-${item.evidence_number}">quoted as [${item.evidence_number}]</a>`;
  if (item.unavailable) {
    return quoteFigure({
      quote: html`<span class="muted">${REMOVED[item.unavailable.reason] ?? "This source is no longer available"} (${dateTag(item.unavailable.at)}).</span>`,
      caption: [item.platform, quoted],
    });
  }
  return quoteFigure({
    quote: item.quote,
    caption: [
      item.title && html`<span class="quote-number">${item.title}</span>`,
      item.platform,
      item.author,
      dateTag(item.published_at),
      item.feedback_kind && words(item.feedback_kind),
      quoted,
      item.url && externalLink(item.url, "original"),
    ],
  });
}

export function renderThemeSourcesPage(model: ThemeSourcesPageModel): string {
  const { insight, sources } = model;
  const self = `${model.sharePath}/insights/${model.n}`;
  const sortLink = (sort: string, label: string) =>
    sort === model.sort
      ? html`<li><a href="${self}${sort === "newest" ? "?sort=newest" : ""}" aria-current="page">${label}</a></li>`
      : html`<li><a href="${self}${sort === "newest" ? "?sort=newest" : ""}">${label}</a></li>`;
  const sortQuery = model.sort === "newest" ? "sort=newest&" : "";
  const pager =
    (sources.next_cursor !== null || model.cursor !== null) &&
    html`<nav class="pager" aria-label="Pages of sources"><ul>
${model.cursor !== null && html`<li><a href="${self}${model.sort === "newest" ? "?sort=newest" : ""}">First page</a></li>`}
${sources.next_cursor !== null && html`<li><a href="${self}?${sortQuery}cursor=${sources.next_cursor}" rel="next">Next page</a></li>`}
</ul></nav>`;
  const body = html`<h1>${insight.title}</h1>
<p class="meta">${POLARITY[insight.polarity]} · ${plural(sources.total, "source")} · a theme of <a href="${model.sharePath}#insight-${model.n}">${model.question}</a></p>
${facts([
  ["Subject", model.subject],
  ["Sources the theme states", formatNumber(sources.total)],
  ["In the analysed sample", formatNumber(sources.sample)],
  ["Listed", sources.listed === null ? "the sample's, then the rest of the scope's" : formatNumber(sources.listed)],
  ["Deleted since", sources.unavailable > 0 ? formatNumber(sources.unavailable) : null],
])}
${paragraphs(insight.summary)}
<p class="note" role="note">${sources.count_basis}</p>
<nav class="toc" aria-label="Order of the sources"><ul>${SORTS.map(([sort, label]) => sortLink(sort, label))}</ul></nav>
${section(
  "sources",
  model.cursor === null ? "Sources" : "Sources (continued)",
  sources.sources.length === 0
    ? html`<p class="muted">No sources on this page.</p>`
    : html`<ul class="sources">${sources.sources.map((item) => html`<li>${sourceCard(item, model)}</li>`)}</ul>`,
)}
${pager}
`;
  return page({ title: insight.title, kind: "Shared theme", body, frame: model.frame });
}
