import type { DbTx } from "../../platform/db.js";
import { OVERALL } from "../enrichment/aspects.js";
import { isLexiconAspect } from "./aspect-mining.js";
import type { ResultData } from "./schemas.js";

/**
 * Words of deleted originals that an analysis made its own: the extractive engine names a theme
 * after a noun phrase its sources used ("web clipper"), and that name reaches the insight's title,
 * summary and the answer, the generated knowledge record and the change feed. A name that only the
 * deleted originals used (no other original of the workspace says it, by the full-text index) would
 * keep their words; it is replaced by `[removed]` wherever the analysis wrote it. Lexicon aspects
 * ("pricing") are the service's own vocabulary and are kept, as is everything else the analysis wrote.
 */
export const REMOVED_WORDS = "[removed]";

/** The theme names of a result that came from its sources' words. */
export function candidatePhrases(data: Partial<ResultData> | null | undefined): string[] {
  const aspects = (data?.insights ?? []).map((i) => i.aspect).filter((a): a is string => typeof a === "string" && a.trim() !== "");
  return [...new Set(aspects.filter((a) => a !== OVERALL && a !== REMOVED_WORDS && !isLexiconAspect(a)))];
}

/** Of `phrases`, those said by the deleted originals (`ids`, still stored) and by no other original of the workspace. */
export async function exclusivePhrases(tx: DbTx, workspaceId: string, ids: string[], phrases: string[]): Promise<string[]> {
  if (phrases.length === 0 || ids.length === 0) return [];
  const rows = await tx.$queryRaw<{ p: string }[]>`
    SELECT p FROM unnest(${phrases}::text[]) AS p
    WHERE numnode(phraseto_tsquery('english', p)) > 0
      AND EXISTS (SELECT 1 FROM content_store c WHERE c.id = ANY(${ids}::uuid[]) AND c.search_vector @@ phraseto_tsquery('english', p))
      AND NOT EXISTS (
        SELECT 1 FROM content_store c
        WHERE c.workspace_id = ${workspaceId}::uuid AND NOT (c.id = ANY(${ids}::uuid[]))
          AND c.search_vector @@ phraseto_tsquery('english', p))`;
  return rows.map((r) => r.p);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `text` with every whole-word occurrence of the phrases (any case) replaced. */
export function scrubText(text: string, phrases: string[]): string {
  if (phrases.length === 0 || typeof text !== "string") return text;
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${phrases.map(escapeRegExp).join("|")})(?![\\p{L}\\p{N}])`, "giu");
  return text.replace(pattern, REMOVED_WORDS);
}

/** A result's own prose with the phrases removed (answer, insight titles, summaries and aspects, limitations). */
export function scrubResult(data: Partial<ResultData>, phrases: string[]): Partial<ResultData> {
  if (phrases.length === 0) return data;
  return {
    ...data,
    ...(typeof data.answer === "string" ? { answer: scrubText(data.answer, phrases) } : {}),
    ...(Array.isArray(data.limitations) ? { limitations: data.limitations.map((l) => scrubText(l, phrases)) } : {}),
    ...(Array.isArray(data.insights)
      ? {
          insights: data.insights.map((i) => ({
            ...i,
            title: scrubText(i.title, phrases),
            summary: scrubText(i.summary, phrases),
            aspect: i.aspect && phrases.some((p) => p.toLowerCase() === i.aspect?.toLowerCase()) ? REMOVED_WORDS : i.aspect,
          })),
        }
      : {}),
  };
}

interface Revision {
  insight_id: string;
  revision: number;
  title: string;
  summary: string;
  reasoning: string;
  limitations: string[];
}

/**
 * The rows an analysis wrote from its result: its insights (entity_insights) and the revisions of
 * generated knowledge records it published, with the change feed's titles, the records' current
 * titles, and the title and summary of actions derived from those revisions (which start as copies).
 * Answers how many rows changed.
 */
export async function scrubDerivedRows(tx: DbTx, analysisId: string, phrases: string[]): Promise<number> {
  if (phrases.length === 0) return 0;
  let changed = 0;
  const insights = await tx.$queryRaw<{ id: string; title: string; summary: string }[]>`
    SELECT id, title, summary FROM entity_insights WHERE analysis_id = ${analysisId}::uuid ORDER BY id FOR UPDATE`;
  for (const i of insights) {
    const title = scrubText(i.title, phrases);
    const summary = scrubText(i.summary, phrases);
    if (title === i.title && summary === i.summary) continue;
    await tx.$executeRaw`UPDATE entity_insights SET title = ${title}, summary = ${summary} WHERE id = ${i.id}::uuid`;
    changed += 1;
  }
  // An insight's stored theme (its topic's name and phrases, kept to list its sources) loses the words too.
  const themes = await tx.$queryRaw<{ insight: number; aspect: string | null; phrases: string[] }[]>`
    SELECT insight, aspect, phrases FROM analysis_themes WHERE analysis_id = ${analysisId}::uuid ORDER BY insight FOR UPDATE`;
  for (const t of themes) {
    const aspect = t.aspect === null ? null : scrubText(t.aspect, phrases);
    const kept = t.phrases.map((p) => scrubText(p, phrases));
    if (aspect === t.aspect && kept.every((p, k) => p === t.phrases[k])) continue;
    await tx.$executeRaw`
      UPDATE analysis_themes SET aspect = ${aspect}, phrases = ${kept}::text[] WHERE analysis_id = ${analysisId}::uuid AND insight = ${t.insight}`;
    changed += 1;
  }
  const revisions = await tx.$queryRaw<Revision[]>`
    SELECT insight_id, revision, title, summary, reasoning, limitations FROM knowledge_insight_revisions
    WHERE analysis_id = ${analysisId}::uuid AND origin = 'generated' ORDER BY insight_id, revision FOR UPDATE`;
  for (const r of revisions) {
    const next = {
      title: scrubText(r.title, phrases),
      summary: scrubText(r.summary, phrases),
      reasoning: scrubText(r.reasoning, phrases),
      limitations: r.limitations.map((l) => scrubText(l, phrases)),
    };
    const same =
      next.title === r.title &&
      next.summary === r.summary &&
      next.reasoning === r.reasoning &&
      next.limitations.every((l, k) => l === r.limitations[k]);
    if (same) continue;
    await tx.$executeRaw`
      UPDATE knowledge_insight_revisions SET title = ${next.title}, summary = ${next.summary}, reasoning = ${next.reasoning},
        limitations = ${next.limitations}::text[]
      WHERE insight_id = ${r.insight_id}::uuid AND revision = ${r.revision}`;
    await tx.$executeRaw`
      UPDATE knowledge_changes SET title = ${next.title} WHERE insight_id = ${r.insight_id}::uuid AND revision = ${r.revision}`;
    await tx.$executeRaw`
      UPDATE knowledge_insights SET title = ${next.title} WHERE id = ${r.insight_id}::uuid AND revision = ${r.revision}`;
    changed += 1 + (await scrubActions(tx, r.insight_id, r.revision, phrases));
  }
  return changed;
}

async function scrubActions(tx: DbTx, insightId: string, revision: number, phrases: string[]): Promise<number> {
  const actions = await tx.$queryRaw<{ id: string; title: string; summary: string }[]>`
    SELECT id, title, summary FROM actions WHERE insight_id = ${insightId}::uuid AND insight_revision = ${revision}
    ORDER BY id FOR UPDATE`;
  let changed = 0;
  for (const a of actions) {
    const title = scrubText(a.title, phrases);
    const summary = scrubText(a.summary, phrases);
    if (title === a.title && summary === a.summary) continue;
    await tx.$executeRaw`UPDATE actions SET title = ${title}, summary = ${summary} WHERE id = ${a.id}::uuid`;
    changed += 1;
  }
  return changed;
}
