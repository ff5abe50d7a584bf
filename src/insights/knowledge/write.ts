import { randomUUID } from "node:crypto";
import { canonicalJson, sha256Hex } from "../../platform/canonical.js";
import type { Db, DbTx, Prisma } from "../../platform/db.js";
import { AppError, ValidationFailed } from "../../platform/errors.js";
import { nextChangeSeq, recordChange } from "./changes.js";
import { type Citation, gateQuotes, pinCitations } from "./citations.js";
import { type InsightRow, insightInScope, toRecord } from "./records.js";
import type { Origin, Receipt, WriteInsightInput } from "./schemas.js";
import { type KnowledgeScope, resolveWritableScope, scopeEntityIds } from "./scope.js";

/**
 * Agent writes: create (`expected_revision` 0) or revise (the revision last read) a record
 * with its complete desired content. In one transaction: the request id is claimed, the
 * record row locked and its revision compared (a stale one is a 409 naming the current
 * revision, never an overwrite), every citation pinned to a snapshot and checked, the
 * revision, its evidence and its change event written, and the receipt stored for
 * replays. The same request id with the same payload answers the stored receipt
 * (`replayed: true`), whatever happened since; with another payload it is a 409.
 */
export interface WriteOutcome {
  status: number;
  body: Receipt;
}

/** Long enough for writers queued behind the scope's change counter. */
export const WRITE_TX = { maxWait: 10_000, timeout: 30_000 } as const;

export async function writeInsight(db: Db, userId: string, input: WriteInsightInput, insightId?: string): Promise<WriteOutcome> {
  const scope = await resolveWritableScope(db, userId, input);
  const { request_id: requestId, ...payload } = input;
  const requestHash = sha256Hex(
    canonicalJson({ op: insightId === undefined ? "create" : "revise", insight_id: insightId ?? null, payload }),
  );

  const earlier = await replayOf(db, userId, requestId, requestHash);
  if (earlier) return earlier;

  const gate = await gateQuotes(db, scope, input.evidence, ["body", "evidence"]);
  if (gate.length > 0) throw new ValidationFailed(gate);

  return db.$transaction(async (tx) => {
    // Concurrent requests with one id: the first writes, the others then replay (or conflict).
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`knowledge-request:${userId}:${requestId}`}))`;
    const replay = await replayOf(tx, userId, requestId, requestHash);
    if (replay) return replay;

    const current = insightId === undefined ? null : await insightInScope(tx, scope, insightId, true);
    const currentRevision = current?.revision ?? 0;
    if (current && input.expected_revision !== currentRevision) {
      throw new AppError(
        "conflict",
        `The insight is at revision ${currentRevision}, not ${input.expected_revision}: read it again, merge, and write with a new request_id.`,
        { extra: { current_revision: currentRevision, insight_id: current.id } },
      );
    }

    const { citations, issues } = await pinCitations(tx, await scopeEntityIds(tx, scope), input.evidence, ["body", "evidence"]);
    if (issues.length > 0) throw new ValidationFailed(issues);

    const written = await commitRevision(tx, scope, current, {
      origin: "agent",
      actorId: userId,
      clientLabel: input.client_label ?? null,
      analysisId: null,
      generatorKey: null,
      title: input.title,
      summary: input.summary,
      reasoning: input.reasoning,
      limitations: input.limitations,
      tags: input.tags,
      citations,
    });
    const status = current ? 200 : 201;
    const body: Receipt = { saved: true, replayed: false, change_seq: written.seq.toString(), record: written.record };
    await tx.knowledgeWriteRequest.create({
      data: {
        userId,
        requestId,
        requestHash,
        insightId: written.record.id,
        status,
        receipt: body as unknown as Prisma.InputJsonObject,
      },
    });
    return { status, body };
  }, WRITE_TX);
}

async function replayOf(db: Db | DbTx, userId: string, requestId: string, requestHash: string): Promise<WriteOutcome | null> {
  const stored = await db.knowledgeWriteRequest.findUnique({ where: { userId_requestId: { userId, requestId } } });
  if (!stored) return null;
  if (stored.requestHash !== requestHash) {
    throw new AppError(
      "idempotency_conflict",
      "This request_id was already used for a different write; reuse a request_id only with its original payload, and use a new one for a new write.",
    );
  }
  return { status: stored.status, body: { ...(stored.receipt as unknown as Receipt), replayed: true } };
}

export interface RevisionContent {
  origin: Origin;
  actorId: string;
  clientLabel: string | null;
  analysisId: string | null;
  generatorKey: string | null;
  title: string;
  summary: string;
  reasoning: string;
  limitations: string[];
  tags: string[];
  citations: Citation[];
}

/**
 * Writes the next revision of a record (revision 1 when `current` is null) with its
 * evidence and change event. The caller holds the record's row lock and has checked
 * everything, so the scope's change counter, taken first here, is held only for these
 * inserts and the commit.
 */
export async function commitRevision(tx: DbTx, scope: KnowledgeScope, current: InsightRow | null, content: RevisionContent) {
  const seq = await nextChangeSeq(tx, scope.id);
  const now = new Date();
  const revision = (current?.revision ?? 0) + 1;
  const agent = content.origin === "agent";
  let insight: InsightRow;
  if (current) {
    const updated = await tx.knowledgeInsight.update({
      where: { id: current.id },
      data: {
        revision,
        title: content.title,
        tags: content.tags,
        origin: content.origin,
        agentRevised: current.agentRevised || agent,
        updatedAt: now,
      },
    });
    insight = updated;
  } else {
    insight = await tx.knowledgeInsight.create({
      data: {
        id: randomUUID(),
        workspaceId: scope.workspaceId,
        entityId: scope.entityId,
        projectId: scope.projectId,
        scopeId: scope.id,
        revision,
        title: content.title,
        tags: content.tags,
        origin: content.origin,
        agentRevised: agent,
        generatorKey: content.generatorKey,
        createdAt: now,
        updatedAt: now,
      },
    });
  }
  const rev = await tx.knowledgeInsightRevision.create({
    data: {
      insightId: insight.id,
      revision,
      title: content.title,
      summary: content.summary,
      reasoning: content.reasoning,
      limitations: content.limitations,
      tags: content.tags,
      origin: content.origin,
      actorId: content.actorId,
      clientLabel: content.clientLabel,
      analysisId: content.analysisId,
      changeSeq: seq,
      createdAt: now,
    },
  });
  const evidence = content.citations.map((c, position) => ({
    insightId: insight.id,
    revision,
    position,
    sourceRevisionId: c.snapshot.id,
    originalId: c.snapshot.originalId,
    quote: c.quote,
    relation: c.relation,
    startOffset: c.start,
    endOffset: c.end,
  }));
  if (evidence.length > 0) await tx.knowledgeRevisionEvidence.createMany({ data: evidence });
  await recordChange(tx, {
    scopeId: scope.id,
    seq,
    insightId: insight.id,
    revision,
    origin: content.origin,
    actorId: content.actorId,
    title: content.title,
  });
  return { seq, record: toRecord(insight, rev, evidence) };
}
