import { dateTag, externalLink, formatNumber, html, paragraphs, type SafeHtml, timeTag, words } from "./html.js";
import { dataTable, facts, joined, list, page, section } from "./layout.js";
import type { KnowledgeCitation, KnowledgePageModel, KnowledgeRevisionSummary } from "./model.js";

/**
 * A shared knowledge record: what it says, why, and each cited quote inside the text captured
 * around it, so a reader can judge the quote in its context without opening the source; then the
 * record's revisions.
 */

const RELATION: Record<string, string> = {
  supports: "Supports",
  contradicts: "Contradicts",
  context: "Context",
};

function citationSource(c: KnowledgeCitation): SafeHtml {
  const s = c.source;
  if (s === null) return html`<p class="meta">Source details are not available.</p>`;
  return html`<p class="meta">${joined([
    s.title && html`<cite>${s.title}</cite>`,
    s.platform,
    s.author,
    dateTag(s.published_at),
    s.text_kind === "interpretation" && "an interpretation, not an original",
    s.url && externalLink(s.url, "original"),
  ])}</p>`;
}

function citationText(c: KnowledgeCitation): SafeHtml {
  const unavailable = !c.available || c.context === null || c.source?.available === false;
  if (unavailable) {
    // The quote was stored with the record, so it can still be shown; only its surroundings are gone.
    const removed = c.source?.removed_at ? html` (removed ${timeTag(c.source.removed_at)})` : "";
    return html`<figure class="quote"><blockquote>${c.quote}</blockquote><figcaption>This source is no longer available${removed}.</figcaption></figure>`;
  }
  const ctx = c.context as NonNullable<KnowledgeCitation["context"]>;
  return html`<figure class="quote"><blockquote>${ctx.before}<mark>${ctx.quote}</mark>${ctx.after}</blockquote><figcaption>The quote, highlighted, in the text captured ${c.source ? timeTag(c.source.captured_at) : "from the source"}.</figcaption></figure>`;
}

function citationArticle(c: KnowledgeCitation, index: number): SafeHtml {
  const id = `citation-${index + 1}`;
  return html`<article class="citation" id="${id}" aria-labelledby="${id}-heading">
<h3 id="${id}-heading">Citation ${index + 1}: ${RELATION[c.relation] ?? words(c.relation)}</h3>
${citationSource(c)}
${citationText(c)}
</article>
`;
}

function history(revisions: readonly KnowledgeRevisionSummary[], current: number): SafeHtml {
  // Newest first whatever order the loader used: the table says "current" by position too.
  const rows = [...revisions].sort((a, b) => b.revision - a.revision);
  return dataTable({
    caption: "Revisions, newest first",
    rows,
    rowAttrs: (r) => (r.revision === current ? html` class="current" aria-current="true"` : null),
    columns: [
      { header: "Revision", cell: (r) => html`${formatNumber(r.revision)}${r.revision === current && " (current)"}`, rowHeader: true },
      { header: "Date", cell: (r) => timeTag(r.created_at) },
      { header: "Title", cell: (r) => r.title },
      { header: "Origin", cell: (r) => words(r.origin) },
      { header: "Review state", cell: (r) => words(r.review_state) },
      { header: "Quotes", cell: (r) => formatNumber(r.evidence_count), numeric: true },
    ],
    empty: "No revisions recorded.",
  });
}

export function renderKnowledgePage(model: KnowledgePageModel): string {
  const r = model.record;
  const citations = [...model.citations].sort((a, b) => a.position - b.position);
  const body = html`<h1>${r.title}</h1>
${facts([
  ["Subject", model.subject],
  ["Review state", words(r.review_state)],
  ["Revision", formatNumber(r.revision)],
  ["Written by", r.origin === "generated" ? "generated from an analysis" : "an agent"],
  ["Updated", timeTag(r.updated_at)],
  ["Tags", r.tags.length > 0 && html`<ul class="tags">${r.tags.map((t) => html`<li>${t}</li>`)}</ul>`],
])}
${section("summary", "Summary", paragraphs(r.summary))}
${r.reasoning.trim() !== "" && section("reasoning", "Reasoning", paragraphs(r.reasoning))}
${section("limitations", "Limitations", list(r.limitations, "None recorded."))}
${section(
  "citations",
  "Citations",
  citations.length === 0 ? html`<p class="muted">No citations.</p>` : citations.map((c, i) => citationArticle(c, i)),
)}
${section("history", "History", history(model.history, r.revision))}
`;
  return page({ title: r.title, kind: "Shared knowledge record", body, frame: model.frame });
}
