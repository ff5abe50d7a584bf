import { EMPTY, type Html, html, raw, type SafeHtml, timeTag } from "./html.js";
import type { LinkFrame } from "./model.js";
import { STYLESHEET_HREF } from "./style.js";

/**
 * The document every shared page shares, and the few building blocks the pages have in common
 * (sections, fact lists, tables, quotes). The page's own content supplies the one `<h1>`; the
 * header and footer use no headings so the outline stays h1 → h2 → h3.
 */

export const PRODUCT = "Research Evidence";

export interface PageInput {
  /** The page's subject; also its `<h1>` is expected to say it. */
  title: string;
  /** What kind of shared page it is, shown in the header ("Shared analysis"). */
  kind: string;
  body: SafeHtml;
  /** The link that opened the page; absent on the page that says a link is not valid. */
  frame?: LinkFrame | null;
  extraHead?: SafeHtml;
  /** Script paths of our own origin, loaded deferred (the CSP allows `script-src 'self'` only). */
  scripts?: readonly string[];
}

function footer(frame: LinkFrame | null | undefined): SafeHtml {
  if (!frame) return html`<footer class="site-footer"><p>${PRODUCT}</p></footer>`;
  return html`<footer class="site-footer">
<p>This is a read-only shared view from ${PRODUCT}. Anyone with the link can open it until it expires.</p>
<p>The link expires ${timeTag(frame.expiresAt)}. This page was rendered ${timeTag(frame.renderedAt)}.</p>
</footer>`;
}

export function page(input: PageInput): string {
  const scripts = (input.scripts ?? []).map((src) => {
    // A script from anywhere else would be blocked by the CSP anyway; failing here finds the mistake in tests.
    if (!src.startsWith("/") || src.startsWith("//")) throw new Error(`Shared pages load scripts of their own origin only: ${src}`);
    return html`<script src="${src}" defer></script>`;
  });
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${input.title} · ${PRODUCT}</title>
<link rel="stylesheet" href="${STYLESHEET_HREF}">
${input.extraHead ?? EMPTY}${scripts}
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
<p class="brand">${PRODUCT}</p>
<p class="page-kind">${input.kind}</p>
</header>
<main id="main" tabindex="-1">
${input.body}
</main>
${footer(input.frame)}
</body>
</html>
`.value;
}

// ── building blocks ─────────────────────────────────────────────────────────

export function section(id: string, heading: string, content: Html): SafeHtml {
  return html`<section id="${id}" aria-labelledby="${id}-heading">
<h2 id="${id}-heading">${heading}</h2>
${content}
</section>
`;
}

/** Label–value pairs; a null value leaves its row out. */
export function facts(pairs: readonly (readonly [string, Html])[]): SafeHtml {
  const shown = pairs.filter(([, value]) => value !== null && value !== undefined && value !== "" && value !== EMPTY);
  return html`<dl class="facts">${shown.map(([term, value]) => html`<dt>${term}</dt><dd>${value}</dd>`)}</dl>`;
}

/** Parts separated by a middle dot, empty parts dropped. */
export function joined(parts: readonly Html[], separator: SafeHtml = raw(" · ")): SafeHtml {
  const kept = parts.filter((p) => p !== null && p !== undefined && p !== false && p !== "" && p !== EMPTY);
  return html`${kept.map((p, i) => (i === 0 ? html`${p}` : html`${separator}${p}`))}`;
}

export function list(items: readonly Html[], empty = "None."): SafeHtml {
  return items.length === 0 ? html`<p class="muted">${empty}</p>` : html`<ul>${items.map((i) => html`<li>${i}</li>`)}</ul>`;
}

export interface QuoteInput {
  /** The element id a citation link jumps to (`q-3`), when this occurrence is the one to carry it. */
  id?: string | null;
  quote: Html;
  caption: readonly Html[];
}

export function quoteFigure(q: QuoteInput): SafeHtml {
  return html`<figure class="quote"${q.id ? html` id="${q.id}"` : ""}><blockquote>${q.quote}</blockquote><figcaption>${joined(q.caption)}</figcaption></figure>`;
}

export interface Column<T> {
  header: string;
  cell: (row: T) => Html;
  numeric?: boolean;
  /** The cell that names the row: a `<th scope="row">`. */
  rowHeader?: boolean;
}

export interface TableInput<T> {
  caption: string;
  columns: readonly Column<T>[];
  rows: readonly T[];
  /** Keep the caption for screen readers only (the section heading already says it). */
  hideCaption?: boolean;
  rowAttrs?: (row: T) => SafeHtml | null;
  empty?: string;
}

/**
 * A table in a scrolling wrapper, so a wide table scrolls inside its box on a phone instead of the
 * page. The wrapper is focusable and named so keyboard users can scroll it too.
 */
export function dataTable<T>(t: TableInput<T>): SafeHtml {
  if (t.rows.length === 0) return html`<p class="muted">${t.empty ?? "None."}</p>`;
  const head = t.columns.map((c) => html`<th scope="col"${c.numeric ? html` class="num"` : ""}>${c.header}</th>`);
  const body = t.rows.map((row) => {
    const cells = t.columns.map((c) => {
      const cls = c.numeric ? html` class="num"` : "";
      return c.rowHeader ? html`<th scope="row"${cls}>${c.cell(row)}</th>` : html`<td${cls}>${c.cell(row)}</td>`;
    });
    return html`<tr${t.rowAttrs?.(row) ?? ""}>${cells}</tr>`;
  });
  return html`<div class="table-wrap" role="region" aria-label="${t.caption}" tabindex="0"><table>
<caption${t.hideCaption ? html` class="visually-hidden"` : ""}>${t.caption}</caption>
<thead><tr>${head}</tr></thead>
<tbody>${body}</tbody>
</table></div>
`;
}
