import type { Db, DbTx } from "../../platform/db.js";
import type { ChangeEvent, Origin } from "./schemas.js";
import type { KnowledgeScope } from "./scope.js";

/**
 * The revision feed of a scope. Every committed revision is one event, numbered by the
 * scope's counter row (`knowledge_scopes`): the writing transaction increments it as its
 * last step, and the row lock it takes then holds until commit, so a concurrent writer of
 * the same scope gets the next number only after this one committed (or rolled back, which
 * returns the number). Numbers are therefore gap-free and visible in order: a reader that
 * has seen event n has seen every event before it, and following `next_after` never
 * misses or repeats one.
 */
export async function nextChangeSeq(tx: DbTx, scopeId: string): Promise<bigint> {
  const rows = await tx.$queryRaw<{ seq: bigint }[]>`
    INSERT INTO knowledge_scopes (scope_id, last_seq) VALUES (${scopeId}::uuid, 1)
    ON CONFLICT (scope_id) DO UPDATE SET last_seq = knowledge_scopes.last_seq + 1
    RETURNING last_seq AS seq`;
  const seq = rows[0]?.seq;
  if (seq === undefined) throw new Error("the scope's change counter returned no number");
  return BigInt(seq);
}

export interface ChangeInput {
  scopeId: string;
  seq: bigint;
  insightId: string;
  revision: number;
  origin: Origin;
  actorId: string;
  title: string;
}

export async function recordChange(tx: DbTx, change: ChangeInput): Promise<void> {
  await tx.knowledgeChange.create({
    data: {
      scopeId: change.scopeId,
      seq: change.seq,
      insightId: change.insightId,
      revision: change.revision,
      kind: change.revision === 1 ? "created" : "revised",
      origin: change.origin,
      actorId: change.actorId,
      title: change.title,
    },
  });
}

/** Events after `after` (a cursor: the last seq the reader processed), oldest first. */
export async function readChanges(db: Db, scope: KnowledgeScope, after: string, limit: number) {
  const rows = await db.knowledgeChange.findMany({
    where: { scopeId: scope.id, seq: { gt: BigInt(after) } },
    orderBy: { seq: "asc" },
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  const events: ChangeEvent[] = page.map((r) => ({
    seq: r.seq.toString(),
    insight_id: r.insightId,
    revision: r.revision,
    kind: r.kind as ChangeEvent["kind"],
    origin: r.origin as Origin,
    actor_id: r.actorId,
    title: r.title,
    recorded_at: r.createdAt.toISOString(),
  }));
  return {
    entity_id: scope.entityId,
    project_id: scope.projectId,
    events,
    after: BigInt(after).toString(),
    next_after: events.at(-1)?.seq ?? BigInt(after).toString(),
    has_more: rows.length > limit,
  };
}
