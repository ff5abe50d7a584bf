import type { ResultData } from "./schemas.js";

/**
 * What an analysis keeps of a deleted original it cited: its own text (answer, insights, counts) and
 * each citation's number, content id and platform, with the quote, url, author and publication date
 * removed and `unavailable: {reason, at}` saying why and when. Prose that put a piece of a deleted
 * quote in quotation marks (a language model's answer may) shows `"[quote removed]"` there instead.
 * Pure functions over the stored JSON; the database side is in deletions.ts.
 */
export type DeletionReason = "deleted" | "author_erased" | "retention" | "workspace_deleted";

export interface Unavailable {
  reason: DeletionReason;
  at: string;
}

/** Why each deleted content id went, by id. */
export type DeletionFacts = Map<string, Unavailable>;

export const REMOVED_QUOTE = "[quote removed]";

type Citation = ResultData["citations"][number];

export function forgetEvidence<T extends { content_id?: unknown }>(item: T, facts: DeletionFacts): T {
  const fact = typeof item.content_id === "string" ? facts.get(item.content_id) : undefined;
  if (!fact) return item;
  return {
    ...item,
    quote: "",
    ...("url" in item ? { url: "" } : {}),
    ...("author" in item ? { author: "" } : {}),
    ...("published_at" in item ? { published_at: null } : {}),
    ...("opinion_unit_id" in item ? { opinion_unit_id: null } : {}),
    unavailable: fact,
  };
}

const QUOTED = /(["“„«])([^"“”„«»]+)(["”»])/gu;

/** Prose with every quoted piece of a deleted quote replaced. */
export function forgetQuotedPieces(text: string, deletedQuotes: string[]): string {
  const gone = deletedQuotes.filter((q) => q.length > 0);
  if (gone.length === 0 || typeof text !== "string") return text;
  return text.replace(QUOTED, (whole, open: string, inner: string, close: string) => {
    const piece = inner.trim();
    return piece.length > 0 && gone.some((q) => q.includes(piece)) ? `${open}${REMOVED_QUOTE}${close}` : whole;
  });
}

/** The quotes of `data` that cite deleted originals (before they are forgotten). */
export function deletedQuotesOf(data: Partial<ResultData>, facts: DeletionFacts): string[] {
  const items = [...(data.evidence ?? []), ...(data.citations ?? []), ...(data.insights ?? []).flatMap((i) => i.evidence ?? [])];
  return [...new Set(items.filter((e) => facts.has(e.content_id) && e.quote).map((e) => e.quote))];
}

/** An analysis result's data with the citations of deleted originals forgotten; the same object when none is cited. */
export function forgetInResult(data: Partial<ResultData> | null | undefined, facts: DeletionFacts): Partial<ResultData> | null | undefined {
  if (!data || typeof data !== "object") return data;
  const quotes = deletedQuotesOf(data, facts);
  const cites = (list: { content_id: string }[] | undefined) => (list ?? []).some((e) => facts.has(e.content_id));
  const touched =
    cites(data.evidence) || cites(data.citations) || (data.insights ?? []).some((i) => cites(i.evidence)) || quotes.length > 0;
  if (!touched) return data;
  return {
    ...data,
    ...(typeof data.answer === "string" ? { answer: forgetQuotedPieces(data.answer, quotes) } : {}),
    ...(Array.isArray(data.evidence) ? { evidence: data.evidence.map((e) => forgetEvidence(e, facts)) } : {}),
    ...(Array.isArray(data.citations) ? { citations: data.citations.map((c: Citation) => forgetEvidence(c, facts)) } : {}),
    ...(Array.isArray(data.insights)
      ? {
          insights: data.insights.map((i) => ({
            ...i,
            summary: forgetQuotedPieces(i.summary, quotes),
            evidence: (i.evidence ?? []).map((e) => forgetEvidence(e, facts)),
          })),
        }
      : {}),
  };
}

/**
 * One stored event's data with deleted citations forgotten (and, for the result, `alsoResult`
 * applied to its data), or null when nothing changed.
 */
export function forgetInEvent(
  event: string,
  data: Record<string, unknown>,
  facts: DeletionFacts,
  alsoResult: (data: Partial<ResultData>) => Partial<ResultData> = (d) => d,
): Record<string, unknown> | null {
  if (event === "evidence") {
    const next = forgetEvidence(data as { content_id?: unknown }, facts);
    return next === data ? null : (next as Record<string, unknown>);
  }
  if (event === "result" && data.data && typeof data.data === "object") {
    const next = alsoResult(forgetInResult(data.data as Partial<ResultData>, facts) ?? {});
    return JSON.stringify(next) === JSON.stringify(data.data) ? null : { ...data, data: next };
  }
  return null;
}

/** The content ids a result cites. */
export function citedIds(data: Partial<ResultData> | null | undefined): string[] {
  if (!data || typeof data !== "object") return [];
  const ids = [...(data.evidence ?? []), ...(data.insights ?? []).flatMap((i) => i.evidence ?? [])].map((e) => e.content_id);
  return [...new Set(ids.filter((id): id is string => typeof id === "string"))];
}
