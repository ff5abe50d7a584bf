import { codePointIndexer, sliceCodePoints } from "../enrichment/opinions.js";
import { isEvidenceRow } from "./scope.js";

/**
 * The one gate every quote passes before anyone sees it, whoever proposed it (the
 * extractive engine or a language model): the quote is kept only if it is a verbatim
 * substring of its cited row's stored content. So a quote can never come from knowledge
 * (meeting summaries live in `knowledge`, not in content_store, and content_store rows of
 * kind `summary` are refused too), from a row that only describes its material (a meeting
 * note's own row: see `isEvidenceRow`), from a row outside the caller's workspaces, or from
 * the proposer's imagination.
 *
 * `checkQuotes` is the check, pure: it takes the cited originals as read from content_store
 * (and the opinion units the candidates name) and decides. Reading them is `loadQuoteOriginals`,
 * and `verifyQuotes` (both in load.ts) reads and checks in one call.
 */
export interface QuoteCandidate {
  content_id: string;
  quote: string;
  /** Code-point offsets the proposer believes the quote has; checked, never trusted. */
  start_offset?: number | null;
  end_offset?: number | null;
  opinion_unit_id?: string | null;
}

export interface VerifiedQuote {
  content_id: string;
  quote: string;
  start_offset: number;
  end_offset: number;
  opinion_unit_id: string | null;
  url: string;
  platform: string;
  author: string;
  published_at: string | null;
  /** What the quoted original is (content_store.feedback_kind), null until enriched. */
  feedback_kind: string | null;
  entity_id: string;
}

export type DropReason = "not_stored_original" | "out_of_scope" | "not_quotable" | "empty" | "not_verbatim";

export interface Verification {
  kept: VerifiedQuote[];
  dropped: { candidate: QuoteCandidate; reason: DropReason }[];
}

/** A cited original as stored (content_store), the fields the check reads. */
export interface QuoteOriginal {
  id: string;
  content: string;
  url: string;
  platform: string;
  author: string;
  publishedAt: Date | null;
  kind: string;
  metadata: unknown;
  workspaceId: string;
  entityId: string;
  feedbackKind: string | null;
}

/** A stored opinion unit a candidate names (its span, to tell whether it holds the quote). */
export interface QuoteUnit {
  id: string;
  contentId: string;
  startOffset: number;
  endOffset: number;
}

/** What the check is given: the stored originals and units the candidates cite, by id. */
export interface QuoteOriginals {
  rows: ReadonlyMap<string, QuoteOriginal>;
  units: ReadonlyMap<string, QuoteUnit>;
}

export interface QuoteAllowance {
  workspaceIds: string[];
  /** Shortest quote kept (trimmed), default MIN_QUOTE_CHARS. */
  minQuoteChars?: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isUuid = (id: unknown): id is string => typeof id === "string" && UUID.test(id);
/** Quotes shorter than this many characters (after trimming) prove nothing. */
export const MIN_QUOTE_CHARS = 8;

/** The ids of the originals and of the opinion units the candidates cite (only well-formed ids are read). */
export function citedIds(candidates: QuoteCandidate[]): { contentIds: string[]; unitIds: string[] } {
  return {
    contentIds: [...new Set(candidates.map((c) => c.content_id).filter(isUuid))],
    unitIds: [...new Set(candidates.map((c) => c.opinion_unit_id).filter(isUuid))],
  };
}

/**
 * Keeps each candidate that is a verbatim slice of its original (at its claimed code-point offsets,
 * or else at its first occurrence), in an allowed workspace, from a quotable row, long enough; drops
 * the rest with the reason. A quote kept twice at the same span is kept once.
 */
export function checkQuotes(candidates: QuoteCandidate[], originals: QuoteOriginals, allowed: QuoteAllowance): Verification {
  const minChars = allowed.minQuoteChars ?? MIN_QUOTE_CHARS;
  const workspaces = new Set(allowed.workspaceIds);
  const kept: VerifiedQuote[] = [];
  const dropped: Verification["dropped"] = [];
  const seen = new Set<string>();

  for (const candidate of candidates) {
    const row = isUuid(candidate.content_id) ? originals.rows.get(candidate.content_id) : undefined;
    const quote = typeof candidate.quote === "string" ? candidate.quote : "";
    let reason: DropReason | undefined;
    if (!row) reason = "not_stored_original";
    else if (!workspaces.has(row.workspaceId)) reason = "out_of_scope";
    else if (!isEvidenceRow(row)) reason = "not_quotable";
    else if (quote.trim().length < minChars) reason = "empty";
    if (reason || !row) {
      dropped.push({ candidate, reason: reason ?? "not_stored_original" });
      continue;
    }
    const span = spanOf(row.content, quote, candidate);
    if (!span) {
      dropped.push({ candidate, reason: "not_verbatim" });
      continue;
    }
    const { start, end } = span;
    const key = `${row.id}:${start}:${end}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const unit = isUuid(candidate.opinion_unit_id) ? originals.units.get(candidate.opinion_unit_id) : undefined;
    kept.push({
      content_id: row.id,
      quote,
      start_offset: start,
      end_offset: end,
      opinion_unit_id: unitCovering(unit, row.id, start, end),
      url: row.url,
      platform: row.platform,
      author: row.author,
      published_at: row.publishedAt ? row.publishedAt.toISOString() : null,
      feedback_kind: row.feedbackKind,
      entity_id: row.entityId,
    });
  }
  return { kept, dropped };
}

/** The quote's code-point span in the content: the claimed one when it holds, else its first occurrence; null if absent. */
function spanOf(content: string, quote: string, claimed: QuoteCandidate): { start: number; end: number } | null {
  const { start_offset: start, end_offset: end } = claimed;
  if (typeof start === "number" && typeof end === "number" && end > start && sliceCodePoints(content, start, end) === quote)
    return { start, end };
  const at = content.indexOf(quote);
  if (at < 0) return null;
  const toCp = codePointIndexer(content);
  return { start: toCp(at), end: toCp(at + quote.length) };
}

/** The unit id when that unit belongs to the row and contains the quote's span; otherwise null. */
function unitCovering(unit: QuoteUnit | undefined, contentId: string, start: number, end: number): string | null {
  return unit && unit.contentId === contentId && unit.startOffset <= start && end <= unit.endOffset ? unit.id : null;
}
