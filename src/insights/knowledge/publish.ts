import { sha256Hex } from "../../platform/canonical.js";
import type { DbTx } from "../../platform/db.js";
import { AppError } from "../../platform/errors.js";
import type { ResultData } from "../analysis/schemas.js";
import type { Citation } from "./citations.js";
import { locateQuote } from "./quotes.js";
import { type EvidenceRow, INSIGHT_COLUMNS, type InsightRow, loadRevision } from "./records.js";
import { type KnowledgeScope, mayEdit, resolveScope, scopeEntityIds } from "./scope.js";
import { allowedRelations, captureSources } from "./sources.js";
import { commitRevision, type RevisionContent } from "./write.js";

/**
 * Analyses publish their insights as `generated` records of the analysis's entity (or, without
 * one, its project), in the transaction that stores the analysis result. A finding keeps its
 * record across re-runs of the same question in the same scope (its generator key: the question
 * and the finding's own key, e.g. its aspect), and a re-run refreshes it in place as a new
 * revision, unless nothing changed (no revision is made) or an agent has revised the record
 * since (it is left alone: generated refreshes never overwrite an agent's revision).
 * Quotes are captured like any other citation; one that no longer reads in its original is
 * dropped, and a finding with no quote left is not published.
 */
export interface GeneratedInsight {
  /** What identifies the finding across runs of the same question (its aspect, else its title). */
  key: string;
  title: string;
  summary: string;
  reasoning: string;
  tags: string[];
  evidence: { content_id: string; quote: string; start_offset: number }[];
}

export interface Publication {
  analysisId: string;
  userId: string;
  entityId: string | null;
  projectId: string | null;
  question: string;
  limitations: string[];
  insights: GeneratedInsight[];
}

const normalise = (text: string) => text.normalize("NFC").toLowerCase().replace(/\s+/g, " ").trim();

export const generatorKey = (question: string, key: string) => sha256Hex("analysis", normalise(question), normalise(key));

/** The record id of each insight (null for one not published), in order; [] when the analysis has no scope to publish to. */
export async function publishGeneratedRecords(tx: DbTx, publication: Publication): Promise<(string | null)[]> {
  const scope = await publishingScope(tx, publication);
  if (!scope) return [];
  // One publisher per scope at a time; it locks the records it refreshes before taking change numbers.
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`knowledge-publish:${scope.id}`}))`;
  const keys = publication.insights.map((insight) => generatorKey(publication.question, insight.key));
  const existing = await tx.$queryRaw<InsightRow[]>`
    SELECT ${INSIGHT_COLUMNS} FROM knowledge_insights i
    WHERE i.scope_id = ${scope.id}::uuid AND i.generator_key = ANY(${keys}::text[])
    ORDER BY i.id FOR UPDATE`;
  const byKey = new Map(existing.map((row) => [row.generatorKey, row]));

  const entityIds = await scopeEntityIds(tx, scope);
  const captured = await captureSources(
    tx,
    entityIds,
    publication.insights.flatMap((insight) => insight.evidence.map((e) => e.content_id)),
  );
  const limitations = publication.limitations
    .filter((l) => l.trim())
    .slice(0, 30)
    .map((l) => l.slice(0, 2000));

  const ids: (string | null)[] = [];
  // A key seen twice in one analysis (two findings about one aspect): the first one counts.
  const idOfKey = new Map<string, string | null>();
  const settle = (key: string, id: string | null) => {
    idOfKey.set(key, id);
    ids.push(id);
  };
  for (const [index, insight] of publication.insights.entries()) {
    const key = keys[index] as string;
    const current = byKey.get(key) ?? null;
    if (idOfKey.has(key)) {
      ids.push(idOfKey.get(key) ?? null);
      continue;
    }
    const citations: Citation[] = [];
    for (const e of insight.evidence) {
      const outcome = captured.get(e.content_id);
      if (!outcome?.ok || !allowedRelations(outcome.snapshot.textKind).includes("supports")) continue;
      const text = outcome.snapshot.text ?? "";
      const span = locateQuote(text, e.quote, e.start_offset) ?? locateQuote(text, e.quote);
      if (!span) continue;
      citations.push({ position: citations.length, snapshot: outcome.snapshot, quote: e.quote, relation: "supports", ...span });
    }
    if (citations.length === 0) {
      settle(key, current?.id ?? null);
      continue;
    }
    if (current?.agentRevised) {
      settle(key, current.id);
      continue;
    }
    const content: RevisionContent = {
      origin: "generated",
      actorId: publication.userId,
      clientLabel: "analysis",
      analysisId: publication.analysisId,
      generatorKey: key,
      title: insight.title.slice(0, 500),
      summary: insight.summary.slice(0, 16_000),
      reasoning: insight.reasoning.slice(0, 16_000),
      limitations,
      tags: [...new Set(insight.tags)],
      citations,
    };
    if (current && (await unchanged(tx, current, content))) {
      settle(key, current.id);
      continue;
    }
    const written = await commitRevision(tx, scope, current, content);
    settle(key, written.record.id);
  }
  return ids;
}

/** The analysis's scope, when its owner may still write there; otherwise nothing is published. */
async function publishingScope(tx: DbTx, publication: Publication): Promise<KnowledgeScope | null> {
  const input = publication.entityId
    ? { entity_id: publication.entityId }
    : publication.projectId
      ? { project_id: publication.projectId }
      : null;
  if (!input) return null;
  try {
    const scope = await resolveScope(tx, publication.userId, input);
    return mayEdit(scope) ? scope : null;
  } catch (err) {
    if (err instanceof AppError && err.code === "not_found") return null;
    throw err;
  }
}

/** Whether the record's current revision already says exactly this (a refresh then makes no revision). */
async function unchanged(tx: DbTx, current: InsightRow, content: RevisionContent): Promise<boolean> {
  const loaded = await loadRevision(tx, current.id, current.revision);
  if (!loaded) return false;
  const { revision: rev, evidence } = loaded;
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const cited = (rows: EvidenceRow[]) => rows.map((e) => [e.sourceRevisionId, e.quote, e.relation, e.startOffset, e.endOffset]);
  return (
    rev.origin === "generated" &&
    rev.title === content.title &&
    rev.summary === content.summary &&
    rev.reasoning === content.reasoning &&
    same(rev.limitations, content.limitations) &&
    same(rev.tags, content.tags) &&
    same(
      cited(evidence),
      content.citations.map((c) => [c.snapshot.id, c.quote, c.relation, c.start, c.end]),
    )
  );
}

/** What an analysis publishes: its insights, keyed by aspect and polarity (or title), with their verified quotes. */
export function analysisPublication(
  analysis: { id: string; userId: string; entityId: string | null; projectId: string | null; question: string },
  data: Pick<ResultData, "insights" | "limitations">,
): Publication {
  return {
    analysisId: analysis.id,
    userId: analysis.userId,
    entityId: analysis.entityId,
    projectId: analysis.projectId,
    question: analysis.question,
    limitations: data.limitations,
    insights: data.insights.map((insight) => {
      // One finding per aspect and side: "pricing" complaints and "pricing" praise are two records.
      const aspect = insight.aspect?.trim() ? `${insight.aspect}:${insight.polarity}` : null;
      return {
        key: aspect ?? insight.title,
        title: insight.title,
        summary: insight.summary,
        reasoning: `Generated by an analysis of "${analysis.question}": ${insight.sentiment} sentiment, confidence ${insight.confidence}.`,
        tags: ["generated", insight.sentiment],
        evidence: insight.evidence.map((e) => ({ content_id: e.content_id, quote: e.quote, start_offset: e.start_offset })),
      };
    }),
  };
}
