import type { Db } from "../../platform/db.js";
import { checkQuotes, citedIds, type QuoteAllowance, type QuoteCandidate, type QuoteOriginals, type Verification } from "./evidence.js";
import type { AnalysisScope } from "./scope.js";
import type { StoredUnit } from "./units.js";

/**
 * The engine's reads between its pure stages (see engine.ts): each fetches what one stage needs
 * and returns plain data. The reads before the pipeline (scope.ts, retrieval.ts, sample.ts) and the
 * scope's counts (scope-counts.ts) live in their own files; these are the small ones.
 */

/** Names of the tracked entities in scope (never an aspect; the question may name them). */
export async function loadEntityNames(db: Db, scope: Pick<AnalysisScope, "workspaceIds" | "entityIds">): Promise<string[]> {
  const entities = await db.entity.findMany({
    where: { workspaceId: { in: scope.workspaceIds }, ...(scope.entityIds ? { id: { in: scope.entityIds } } : {}) },
    select: { name: true },
  });
  return entities.map((e) => e.name);
}

/** The stored opinion units of the rows, each row's in text order (the units stage's input, units.ts). */
export function loadStoredUnits(db: Db, rows: { id: string }[]): Promise<StoredUnit[]> {
  return db.opinionUnit.findMany({
    where: { contentId: { in: rows.map((r) => r.id) } },
    orderBy: [{ contentId: "asc" }, { startOffset: "asc" }],
    select: {
      id: true,
      contentId: true,
      startOffset: true,
      endOffset: true,
      text: true,
      aspect: true,
      sentiment: true,
      sentimentLabel: true,
      kind: true,
      terms: true,
      comparedWith: true,
      churn: true,
      analyserVersion: true,
    },
  });
}

/** The stored originals and opinion units the quote candidates cite, for `checkQuotes` (evidence.ts). */
export async function loadQuoteOriginals(db: Db, candidates: QuoteCandidate[]): Promise<QuoteOriginals> {
  const { contentIds, unitIds } = citedIds(candidates);
  const rows =
    contentIds.length === 0
      ? []
      : await db.content.findMany({
          where: { id: { in: contentIds } },
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
            enrichment: { select: { feedbackKind: true } },
          },
        });
  const units =
    unitIds.length === 0
      ? []
      : await db.opinionUnit.findMany({
          where: { id: { in: unitIds } },
          select: { id: true, contentId: true, startOffset: true, endOffset: true },
        });
  return {
    rows: new Map(rows.map(({ enrichment, ...r }) => [r.id, { ...r, feedbackKind: enrichment?.feedbackKind ?? null }])),
    units: new Map(units.map((u) => [u.id, u])),
  };
}

/** The quote gate in one call: reads the cited originals, then checks the candidates against them. */
export async function verifyQuotes(db: Db, candidates: QuoteCandidate[], allowed: QuoteAllowance): Promise<Verification> {
  return checkQuotes(candidates, await loadQuoteOriginals(db, candidates), allowed);
}
