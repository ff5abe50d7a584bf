import { isUuid } from "../../access/workspaces/access.js";
import { insightInScope, resolveEvidence } from "../../insights/knowledge/records.js";
import { type KnowledgeScope, resolveScope, resolveWritableScope } from "../../insights/knowledge/scope.js";
import { loadSnapshots } from "../../insights/knowledge/sources.js";
import { canonicalJson } from "../../platform/canonical.js";
import { type Db, isUniqueViolation, type Prisma } from "../../platform/db.js";
import { AppError, notFound, ValidationFailed } from "../../platform/errors.js";
import {
  ACTION_BASIS,
  type ActionRecord,
  type CreateActionInput,
  DEFAULT_LISTED_STATUSES,
  type ListActionsQuery,
  MAX_PLAN_CHARS,
  OBJECT_TYPES,
  type UpdateActionInput,
} from "./schemas.js";

/**
 * Actions: follow-up plans derived from one revision of a finding (a knowledge record) of an
 * entity. Every member of the entity's workspace reads them; members who may write knowledge
 * records create and change them (a viewer gets 403). The evidence is the finding revision's,
 * which never changes, resolved when read: each quote with its span, relation and whether its
 * original still exists.
 */
type ActionRow = Prisma.ActionGetPayload<object>;

interface FindingRef {
  revisionCreatedAt: Date;
  currentRevision: number;
  title: string;
  evidence: ActionRecord["evidence"];
}

const pairKey = (insightId: string, revision: number) => `${insightId}:${revision}`;

/** The cited evidence of each finding revision, resolved against its snapshots. */
async function findings(db: Db, rows: { insightId: string; insightRevision: number }[]): Promise<Map<string, FindingRef>> {
  const pairs = [
    ...new Map(
      rows.map((r) => [pairKey(r.insightId, r.insightRevision), { insightId: r.insightId, revision: r.insightRevision }]),
    ).values(),
  ];
  if (pairs.length === 0) return new Map();
  const [revisions, evidence, insights] = await Promise.all([
    db.knowledgeInsightRevision.findMany({ where: { OR: pairs }, select: { insightId: true, revision: true, createdAt: true } }),
    db.knowledgeRevisionEvidence.findMany({
      where: { OR: pairs },
      orderBy: [{ insightId: "asc" }, { revision: "asc" }, { position: "asc" }],
    }),
    db.knowledgeInsight.findMany({
      where: { id: { in: pairs.map((p) => p.insightId) } },
      select: { id: true, revision: true, title: true },
    }),
  ]);
  const snapshots = await loadSnapshots(
    db,
    evidence.map((e) => e.sourceRevisionId),
  );
  const insightOf = new Map(insights.map((i) => [i.id, i]));
  const out = new Map<string, FindingRef>();
  for (const rev of revisions) {
    const own = evidence.filter((e) => e.insightId === rev.insightId && e.revision === rev.revision);
    const resolved = resolveEvidence(own, snapshots);
    const insight = insightOf.get(rev.insightId);
    out.set(pairKey(rev.insightId, rev.revision), {
      revisionCreatedAt: rev.createdAt,
      currentRevision: insight?.revision ?? rev.revision,
      title: insight?.title ?? "",
      evidence: resolved.map((e) => {
        const snapshot = snapshots.get(e.source_revision_id);
        return {
          position: e.position,
          content_id: e.content_id,
          source_revision_id: e.source_revision_id,
          quote: e.quote,
          start: e.start,
          end: e.end,
          relation: e.relation,
          available: e.available,
          platform: snapshot?.platform ?? null,
          url: snapshot?.url ?? null,
          author: snapshot?.author ?? null,
          published_at: snapshot?.publishedAt?.toISOString() ?? null,
        };
      }),
    });
  }
  return out;
}

function toRecord(row: ActionRow, finding: FindingRef | undefined): ActionRecord {
  const evidence = finding?.evidence ?? [];
  return {
    id: row.id,
    entity_id: row.entityId,
    object_type: row.objectType as ActionRecord["object_type"],
    title: row.title,
    summary: row.summary,
    status: row.status as ActionRecord["status"],
    urgency: (row.urgency as ActionRecord["urgency"]) ?? null,
    impact_score: null,
    signal_count: new Set(evidence.map((e) => e.content_id)).size,
    evidence,
    knowledge_ref: {
      insight_id: row.insightId,
      revision: row.insightRevision,
      current_revision: finding?.currentRevision ?? row.insightRevision,
      title: finding?.title ?? "",
    },
    payload: { action_plan: (row.actionPlan as Record<string, unknown> | null) ?? null },
    revision: row.revision,
    created_by: row.createdBy,
    updated_by: row.updatedBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    last_seen_at: (finding?.revisionCreatedAt ?? row.createdAt).toISOString(),
  };
}

async function records(db: Db, rows: ActionRow[]): Promise<ActionRecord[]> {
  const refs = await findings(db, rows);
  return rows.map((r) => toRecord(r, refs.get(pairKey(r.insightId, r.insightRevision))));
}

export async function listActions(db: Db, userId: string, query: ListActionsQuery) {
  const scope = await resolveScope(db, userId, { entity_id: query.entity_id });
  const statuses = query.status ? [query.status] : [...DEFAULT_LISTED_STATUSES];
  const where = {
    entityId: scope.id,
    status: { in: statuses },
    ...(query.object_type ? { objectType: query.object_type } : {}),
  };
  const [rows, total] = await db.$transaction([
    db.action.findMany({ where, orderBy: [{ createdAt: "asc" }, { id: "asc" }], take: query.limit, skip: query.offset }),
    db.action.count({ where }),
  ]);
  const objects = await records(db, rows);
  return {
    entity_id: scope.id,
    mode: "actions" as const,
    object_types: query.object_type ? [query.object_type] : [...OBJECT_TYPES],
    statuses,
    objects,
    count: objects.length,
    total,
    limit: query.limit,
    offset: query.offset,
    next_offset: objects.length > 0 && query.offset + objects.length < total ? query.offset + objects.length : null,
    basis: ACTION_BASIS,
  };
}

/** An action plan is at most MAX_PLAN_CHARS characters of JSON (422 at the field). */
function checkPlanSize(plan: Record<string, unknown> | undefined): void {
  if (plan === undefined || [...JSON.stringify(plan)].length <= MAX_PLAN_CHARS) return;
  throw new ValidationFailed([
    { loc: ["body", "action_plan"], msg: `action_plan should be at most ${MAX_PLAN_CHARS} characters of JSON`, type: "too_long" },
  ]);
}

/** What "the same create" compares: the fields a create sets. */
const createdFields = (a: { title: string; summary: string; status: string; urgency: string | null; actionPlan: unknown }) =>
  canonicalJson({ title: a.title, summary: a.summary, status: a.status, urgency: a.urgency, action_plan: a.actionPlan ?? null });

export async function createAction(db: Db, userId: string, input: CreateActionInput): Promise<{ status: 200 | 201; body: ActionRecord }> {
  checkPlanSize(input.action_plan);
  const scope = await resolveWritableScope(db, userId, { entity_id: input.entity_id });
  const insight = await insightInScope(db, scope, input.insight_id);
  const revision = input.insight_revision ?? insight.revision;
  const finding =
    revision <= insight.revision
      ? await db.knowledgeInsightRevision.findUnique({ where: { insightId_revision: { insightId: insight.id, revision } } })
      : null;
  if (!finding) throw notFound(`Revision ${revision} of the insight`);

  const data = {
    workspaceId: scope.workspaceId,
    entityId: scope.id,
    insightId: insight.id,
    insightRevision: revision,
    objectType: input.object_type,
    title: input.title ?? finding.title.trim().slice(0, 300),
    summary: input.summary ?? finding.summary.slice(0, 4000),
    status: input.status,
    urgency: input.urgency ?? null,
    actionPlan: (input.action_plan ?? null) as Prisma.InputJsonValue | null,
  };
  let row: ActionRow;
  let created = true;
  try {
    row = await db.action.create({ data: { ...data, actionPlan: data.actionPlan ?? undefined, createdBy: userId, updatedBy: userId } });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    created = false;
    row = await db.action.findFirstOrThrow({
      where: { entityId: scope.id, insightId: insight.id, insightRevision: revision, objectType: input.object_type },
    });
  }
  const [record] = await records(db, [row]);
  if (!created && createdFields(row) !== createdFields(data)) {
    throw new AppError(
      "conflict",
      `An action of type ${input.object_type} already exists for revision ${revision} of this finding, with other settings; change it with PATCH.`,
      { extra: { action: record } },
    );
  }
  return { status: created ? 201 : 200, body: record as ActionRecord };
}

/** The action if the caller is a member of its workspace (404 otherwise, as an unknown id); `write` also needs a role that may write (403). */
export async function actionInScope(
  db: Db,
  userId: string,
  actionId: string,
  write: boolean,
): Promise<{ row: ActionRow; scope: KnowledgeScope }> {
  if (!isUuid(actionId)) throw notFound("Action");
  const row = await db.action.findUnique({ where: { id: actionId } });
  if (!row) throw notFound("Action");
  // Not a member of the action's workspace: the same 404 as an unknown id.
  const scope = await (write ? resolveWritableScope : resolveScope)(db, userId, { entity_id: row.entityId }).catch((err: unknown) => {
    if (err instanceof AppError && err.code === "not_found") throw notFound("Action");
    throw err;
  });
  return { row, scope };
}

export async function getAction(db: Db, userId: string, actionId: string): Promise<ActionRecord> {
  const { row } = await actionInScope(db, userId, actionId, false);
  return (await records(db, [row]))[0] as ActionRecord;
}

export async function updateAction(db: Db, userId: string, actionId: string, input: UpdateActionInput): Promise<ActionRecord> {
  checkPlanSize(input.action_plan);
  const { row } = await actionInScope(db, userId, actionId, true);
  const changes = {
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(input.urgency !== undefined ? { urgency: input.urgency } : {}),
    ...(input.title !== undefined ? { title: input.title } : {}),
    ...(input.summary !== undefined ? { summary: input.summary } : {}),
    ...(input.action_plan !== undefined ? { actionPlan: input.action_plan as Prisma.InputJsonValue } : {}),
  };
  const unchanged = Object.entries(changes).every(
    ([k, v]) => canonicalJson((row as Record<string, unknown>)[k] ?? null) === canonicalJson(v),
  );
  const stale = () =>
    new AppError("conflict", "The action changed since it was read; read it again and send its current revision.", {
      extra: { current_revision: row.revision },
    });
  if (input.expected_revision !== undefined && input.expected_revision !== row.revision) throw stale();
  if (unchanged) return (await records(db, [row]))[0] as ActionRecord;
  // With expected_revision the write applies only to that revision; without, the last write wins.
  const updated = await db.action.updateMany({
    where: { id: row.id, ...(input.expected_revision !== undefined ? { revision: input.expected_revision } : {}) },
    data: { ...changes, revision: { increment: 1 }, updatedBy: userId },
  });
  if (updated.count === 0) throw stale();
  const fresh = await db.action.findUniqueOrThrow({ where: { id: row.id } });
  return (await records(db, [fresh]))[0] as ActionRecord;
}
