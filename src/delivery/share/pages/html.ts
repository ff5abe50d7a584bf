/**
 * The one way shared pages build markup: a tagged template that escapes every interpolated value
 * unless it is already SafeHtml, so a page cannot forget to escape a question, a quote or an
 * author name that came from a source on the web. Templates always quote attribute values
 * (`href="${url}"`); escaping `"` and `'` is what keeps a value inside its attribute.
 */

/** Markup known to be safe: built by `html` or `raw`, never from a plain string. */
class Trusted {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}
/** Only `html` and `raw` make one (the class is not exported), so the type works as a brand. */
export type SafeHtml = Trusted;

/** What a template accepts: false, null and undefined render nothing, so `${cond && html`…`}` works. */
export type Html = SafeHtml | string | number | null | undefined | false | readonly Html[];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const NEEDS_ESCAPE = /[&<>"']/;
const ESCAPE_ALL = /[&<>"']/g;

export function escapeHtml(text: string): string {
  // Most strings (labels, numbers, dates) need nothing; testing first skips the replace's allocation.
  return NEEDS_ESCAPE.test(text) ? text.replace(ESCAPE_ALL, (c) => ESCAPES[c] as string) : text;
}

function render(value: Html): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof Trusted) return value.value;
  if (typeof value === "string") return escapeHtml(value);
  if (typeof value === "number") return String(value);
  let out = "";
  for (const item of value) out += render(item);
  return out;
}

export function html(strings: TemplateStringsArray, ...values: Html[]): SafeHtml {
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += render(values[i] as Html) + (strings[i + 1] as string);
  return new Trusted(out);
}

/** For constants written in this folder only; never for text that came from a request or a source. */
export const raw = (markup: string): SafeHtml => new Trusted(markup);

export const EMPTY = raw("");

/**
 * The href a page may link to: an absolute http(s) URL or a same-page fragment. Anything else
 * (javascript:, data:, relative, protocol-relative) gets null and is shown as text. The URL is
 * kept as written: `URL` is the parser browsers use for href, so what passed here is what the
 * browser opens (stray leading spaces or tabs in "javascript:" included, which both strip).
 */
export function safeHref(url: string): string | null {
  if (/^#[A-Za-z][\w:.-]*$/.test(url)) return url;
  const parsed = URL.parse(url);
  return parsed !== null && (parsed.protocol === "http:" || parsed.protocol === "https:") ? url : null;
}

/**
 * A link to a page outside the service. Sources are third-party pages, so the link hides our URL
 * (noreferrer), gives the new tab no handle on this one (noopener) and lends no ranking (nofollow).
 * An unsafe URL renders as its own text, so a reader still sees what the source pointed to.
 */
export function externalLink(url: string, text: string): SafeHtml {
  const href = safeHref(url);
  if (href === null || href.startsWith("#")) return url === "" ? EMPTY : html`<span class="unlinked">${url}</span>`;
  return html`<a class="external" href="${href}" rel="noopener noreferrer nofollow" target="_blank">${text}<span class="visually-hidden"> (opens in a new tab)</span></a>`;
}

// ── formatting: one format per kind of value across every page ─────────────

const NUMBER = new Intl.NumberFormat("en-US");
const PERCENT = new Intl.NumberFormat("en-US", { style: "percent", maximumFractionDigits: 0 });

export const formatNumber = (n: number): string => NUMBER.format(n);
export const formatPercent = (share: number): string => PERCENT.format(share);
export const plural = (n: number, one: string, many = `${one}s`): string => `${formatNumber(n)} ${n === 1 ? one : many}`;

const parseDate = (iso: string): Date | null => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
};

/** "2026-11-26 09:15 UTC": UTC so every reader of a shared link sees the same time. */
export function formatDateTime(iso: string): string {
  const d = parseDate(iso);
  return d === null ? iso : `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export function formatDate(iso: string): string {
  const d = parseDate(iso);
  return d === null ? iso : d.toISOString().slice(0, 10);
}

/** A `<time>` element; a value that is not a date is shown as given, without the machine-readable attribute. */
export function timeTag(iso: string | null, format: (iso: string) => string = formatDateTime): SafeHtml {
  if (iso === null) return EMPTY;
  const d = parseDate(iso);
  return d === null ? html`${iso}` : html`<time datetime="${d.toISOString()}">${format(iso)}</time>`;
}

export const dateTag = (iso: string | null): SafeHtml => timeTag(iso, formatDate);

/** "feature_request" → "feature request": stored enum values read as words. */
export const words = (value: string): string => value.replaceAll("_", " ");

/** Blank-line separated paragraphs; single line breaks stay (the stylesheet keeps them with pre-line). */
export function paragraphs(text: string, inline: (part: string) => Html = (part) => part): SafeHtml {
  const parts = text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p !== "");
  return html`${parts.map((p) => html`<p class="prose">${inline(p)}</p>`)}`;
}
