import { codePointIndexer, sliceCodePoints } from "../enrichment/opinions.js";
import type { Db } from "../platform/db.js";
import { isEvidenceRow } from "./scope.js";

/**
 * The one gate every quote passes before anyone sees it, whoever proposed it (the
 * extractive engine or a language model): the cited row is re-read from content_store
 * and the quote is kept only if it is a verbatim substring of that row's content. So a
 * quote can never come from knowledge (meeting summaries live in `knowledge`, not in
 * content_store, and content_store rows of kind `summary` are refused too), from a row that
 * only describes its material (a meeting note's own row: see `isEvidenceRow`), from a row
 * outside the caller's workspaces, or from the proposer's imagination.
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Quotes shorter than this many characters (after trimming) prove nothing. */
export const MIN_QUOTE_CHARS = 8;

export async function verifyQuotes(
  db: Db,
  candidates: QuoteCandidate[],
  allowed: { workspaceIds: string[] /** Shortest quote kept (trimmed), default MIN_QUOTE_CHARS. */; minQuoteChars?: number },
): Promise<Verification> {
  const minChars = allowed.minQuoteChars ?? MIN_QUOTE_CHARS;
  const ids = [...new Set(candidates.map((c) => c.content_id).filter((id) => typeof id === "string" && UUID.test(id)))];
  const rows =
    ids.length === 0
      ? []
      : await db.content.findMany({
          where: { id: { in: ids } },
          select: {
            id: true,
            content: true,
            url: true,
            platform: true,
            author: true,
            publishedAt: true,
            kind: true,
            metadata: true,
            workspaceId: true,
            entityId: true,
            feedbackKind: true,
          },
        });
  const byId = new Map(rows.map((r) => [r.id, r]));
  const unitIds = [
    ...new Set(candidates.map((c) => c.opinion_unit_id).filter((id): id is string => typeof id === "string" && UUID.test(id))),
  ];
  const units =
    unitIds.length === 0
      ? []
      : await db.opinionUnit.findMany({
          where: { id: { in: unitIds } },
          select: { id: true, contentId: true, startOffset: true, endOffset: true },
        });
  const unitById = new Map(units.map((u) => [u.id, u]));
  const workspaces = new Set(allowed.workspaceIds);
  const kept: VerifiedQuote[] = [];
  const dropped: Verification["dropped"] = [];
  const seen = new Set<string>();

  for (const candidate of candidates) {
    const row = byId.get(candidate.content_id);
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

    let start: number;
    let end: number;
    const claimedStart = candidate.start_offset;
    const claimedEnd = candidate.end_offset;
    if (
      typeof claimedStart === "number" &&
      typeof claimedEnd === "number" &&
      claimedEnd > claimedStart &&
      sliceCodePoints(row.content, claimedStart, claimedEnd) === quote
    ) {
      start = claimedStart;
      end = claimedEnd;
    } else {
      const at = row.content.indexOf(quote);
      if (at < 0) {
        dropped.push({ candidate, reason: "not_verbatim" });
        continue;
      }
      const toCp = codePointIndexer(row.content);
      start = toCp(at);
      end = toCp(at + quote.length);
    }
    const key = `${row.id}:${start}:${end}`;
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push({
      content_id: row.id,
      quote,
      start_offset: start,
      end_offset: end,
      opinion_unit_id: unitCovering(unitById.get(candidate.opinion_unit_id ?? ""), row.id, start, end),
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

/** The unit id when that unit belongs to the row and contains the quote's span; otherwise null. */
function unitCovering(
  unit: { id: string; contentId: string; startOffset: number; endOffset: number } | undefined,
  contentId: string,
  start: number,
  end: number,
): string | null {
  return unit && unit.contentId === contentId && unit.startOffset <= start && end <= unit.endOffset ? unit.id : null;
}
