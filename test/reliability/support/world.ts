import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { runAdminCommand } from "../../../src/governance/admin/commands.js";
import type { Harness } from "../../helpers/harness.js";
import type { Known } from "./arbitraries.js";

/**
 * One user's complete set of resources, made through the API where that is cheap and
 * written straight to the database where the API would need a worker or a stream
 * (an analysis, a workflow run, a note sync): a workspace, project, entities, skills,
 * stored content, a collection job and a research job, keys of every scope.
 */
export interface World {
  sub: string;
  token: string;
  userId: string;
  workspaceId: string;
  projectId: string;
  entityId: string;
  entityIds: string[];
  skillId: string;
  contentId: string;
  /** An original of the company entity that no other route reads: the one `DELETE /agent/v1/content/{content_id}` deletes. */
  spareContentId: string;
  /** An entity no other route reads, its deletion requested as the world is built: the one `DELETE /api/entities/{entity_id}` and its progress read name. */
  spareEntityId: string;
  /** A second project of the workspace (with a company of its own) no other route reads, its deletion requested as the world is built: the one `DELETE /api/projects/{project_id}` and its progress read name. */
  spareProjectId: string;
  /** A knowledge record no other route reads: the one `DELETE /agent/v1/knowledge/insights/{insight_id}` deletes. */
  spareInsightId: string;
  /**
   * A second workspace of the world's user, the one `DELETE /api/workspaces/{workspace_id}` and its restore act on
   * (deleting the world's own workspace would end every other route). It is made in the database (no route creates
   * a workspace apart from onboarding) with the world's members; a suite that adds members later adds them here too.
   */
  spareWorkspaceId: string;
  collectionJobId: string;
  researchJobId: string;
  analysisId: string;
  runId: string;
  noteRequestId: string;
  keys: { ingest: Key; export: Key; all: Key; revoked: Key };
  /** Every id of this world by the parameter name it travels under. */
  ids: Record<string, string[]>;
}

/** A verbatim quote of the world's stored source (what a knowledge record may cite). */
export const WORLD_QUOTE = "The pricing page is confusing";

export interface Key {
  id: string;
  raw: string;
}

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

async function ok<T>(what: string, res: { status: number; body: unknown }, expected: number[] = [200, 201]): Promise<T> {
  if (!expected.includes(res.status)) throw new Error(`${what} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as T;
}

export async function buildWorld(
  h: Harness,
  options: { sub?: string; tokenOptions?: Parameters<Harness["token"]>[1] } = {},
): Promise<World> {
  const sub = options.sub ?? `user-${randomUUID()}`;
  const token = await h.token(sub, options.tokenOptions);
  const onboarding = await ok<{
    workspace_id: string;
    project_id: string;
    entity_ids: string[];
    company: { id: string };
    research_objectives: { skill_id: string }[];
  }>(
    "onboarding",
    await h.http
      .post("/api/entities/onboarding")
      .set(auth(token))
      .send({
        request_id: randomUUID(),
        company: { name: `Acme ${sub}`, url: "https://acme.example.com", keywords: ["acme"], platforms: ["hackernews"] },
        competitors: [{ name: "Globex", url: "https://globex.example.com" }],
        // A skill's id is its entity's own: each user names theirs differently, so a foreign id is unknown here.
        research_objectives: [{ id: `churn-${sub}`, title: "Why do teams churn?", question: "What makes teams leave?" }],
        collection_mode: "server",
      }),
  );
  // The account exists once its user has made a request; raw export is enabled for it then.
  await runAdminCommand(h.deps, ["enable-raw-export", sub]);
  const user = await h.deps.db.user.findUniqueOrThrow({ where: { sub } });
  const ownMembership = await h.deps.db.workspaceMember.findUniqueOrThrow({
    where: { workspaceId_userId: { workspaceId: onboarding.workspace_id, userId: user.id } },
  });
  const entityId = onboarding.company.id;
  const skillId = onboarding.research_objectives[0]?.skill_id;
  if (!skillId) throw new Error("onboarding created no skill");

  // An entity outside the onboarding tree: a valid parent for any of the others.
  const standalone = await ok<{ id: string }>(
    "entity creation",
    await h.http.post("/api/entities").set(auth(token)).send({ name: "Standalone", workspace_id: onboarding.workspace_id }),
  );

  // An entity for the entity delete route and its progress read (requests.ts aims them there).
  const spareEntity = await ok<{ id: string }>(
    "spare entity creation",
    await h.http.post("/api/entities").set(auth(token)).send({ name: "Spare", workspace_id: onboarding.workspace_id }),
  );

  // A project for the project delete route and its progress read (requests.ts aims them there).
  const spareProject = await ok<{ project_id: string }>(
    "spare project onboarding",
    await h.http
      .post("/api/entities/onboarding")
      .set(auth(token))
      .send({ request_id: randomUUID(), workspace_id: onboarding.workspace_id, company: { name: "Spare project" } }),
  );

  const key = async (scopes: string[]): Promise<Key> => {
    const body = await ok<{ key: { id: string }; raw_key: string }>(
      "key creation",
      await h.http
        .post("/api/user/keys")
        .set(auth(token))
        .send({ name: `k-${scopes.join("")}`, scopes }),
    );
    return { id: body.key.id, raw: body.raw_key };
  };
  const keys = { ingest: await key(["ingest"]), export: await key(["export"]), all: await key(["*"]), revoked: await key(["*"]) };
  await ok("key revoke", await h.http.delete(`/api/user/keys/${keys.revoked.id}`).set(auth(token)));

  const ingest = await ok<{ content_ids: string[] }>(
    "ingest",
    await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(token))
      .send({
        entity_id: entityId,
        sources: [
          {
            id: `src-${sub}`,
            platform: "reddit",
            url: `https://example.com/${sub}`,
            title: "Pricing thread",
            content: "The pricing page is confusing but the support team answered within minutes.",
            comments: [{ id: `c-${sub}`, text: "Agreed, pricing tiers are unclear." }],
          },
        ],
      }),
  );
  const contentId = ingest.content_ids[0] as string;
  // A spare original with a comment, for the delete route (requests.ts aims it there).
  const spare = await ok<{ content_ids: string[] }>(
    "spare ingest",
    await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(token))
      .send({
        entity_id: entityId,
        sources: [{ id: `spare-${sub}`, platform: "reddit", content: "A spare original.", comments: [{ text: "A reply to it." }] }],
      }),
  );
  const spareContentId = spare.content_ids[0] as string;

  // A knowledge record of the company entity, citing the stored source.
  const insight = await ok<{ record: { id: string; evidence: { source_revision_id: string }[] } }>(
    "knowledge record",
    await h.http
      .post("/agent/v1/knowledge/insights")
      .set(auth(token))
      .send({
        entity_id: entityId,
        request_id: randomUUID(),
        expected_revision: 0,
        title: "Pricing confuses",
        summary: "The pricing page is confusing.",
        evidence: [{ content_id: contentId, quote: WORLD_QUOTE }],
      }),
  );

  // A second record, for the record delete route.
  const spareInsight = await ok<{ record: { id: string } }>(
    "spare knowledge record",
    await h.http
      .post("/agent/v1/knowledge/insights")
      .set(auth(token))
      .send({
        entity_id: entityId,
        request_id: randomUUID(),
        expected_revision: 0,
        title: "Spare finding",
        summary: "A spare record.",
        evidence: [{ content_id: contentId, quote: WORLD_QUOTE }],
      }),
  );
  // A saved context page of the user, for the page delete route.
  const page = await ok<{ id: string }>(
    "context page",
    await h.http.post("/agent/v1/context/save").set(auth(token)).send({ title: "Spare page", content: "A spare page." }),
  );

  // An action derived from that record.
  const action = await ok<{ id: string }>(
    "action",
    await h.http
      .post("/api/sweeps/objects")
      .set(auth(token))
      .send({ entity_id: entityId, insight_id: insight.record.id, object_type: "pain_point" }),
  );

  // An execution of that action, approved and not yet started.
  const execution = await ok<{ id: string }>(
    "execution",
    await h.http
      .post(`/api/sweeps/objects/${action.id}/executions`)
      .set(auth(token))
      .send({ executor_platform: "agent", approved_for_execution: true, steps: ["Rewrite the pricing page"] }),
  );

  const job = async (route: "collection" | "research") =>
    (
      await ok<{ job_id: string }>(
        `${route} job`,
        await h.http
          .post(`/agent/v1/ingest/${route}/jobs`)
          .set(auth(token))
          .send({
            entity_id: entityId,
            objective: "Why do teams churn?",
            platforms: ["hackernews"],
            idempotency_key: `${route}-${randomUUID()}`,
          }),
      )
    ).job_id;
  const collectionJobId = await job("collection");
  const researchJobId = await job("research");

  const analysis = await h.deps.db.analysis.create({
    data: {
      userId: user.id,
      workspaceId: onboarding.workspace_id,
      entityId,
      question: "What do people say about pricing?",
      status: "failed",
      error: "The analysis failed.",
      finishedAt: new Date(),
    },
  });
  await h.deps.db.analysisEvent.create({
    data: {
      analysisId: analysis.id,
      seq: 1,
      event: "error",
      data: { analysis_id: analysis.id, status: "failed", detail: "The analysis failed." },
    },
  });
  const skillRow = await h.deps.db.skill.findUniqueOrThrow({ where: { entityId_key: { entityId, key: skillId } } });
  const run = await h.deps.db.workflowRun.create({
    data: {
      skillId: skillRow.id,
      skillKey: skillRow.key,
      entityId,
      workspaceId: onboarding.workspace_id,
      userId: user.id,
      idempotencyKey: `run-${randomUUID()}`,
      requestHash: "0".repeat(64),
      scopeHash: "0".repeat(64),
      sourceMode: "saved",
      status: "completed",
      maxChargeCredits: 0,
    },
  });
  // A paused routine of the skill, so the routine routes have one to read.
  await ok(
    "routine",
    await h.http
      .put(`/api/entities/${entityId}/skills/${skillId}/routine`)
      .set(auth(token))
      .send({ enabled: false, interval_hours: 24, source_mode: "saved", max_charge_cents: 100, expected_revision: 0 }),
  );
  // A finished evidence capture run of the company entity.
  const sweepRun = await h.deps.db.sweepRun.create({
    data: {
      userId: user.id,
      entityId,
      idempotencyKey: `capture-${randomUUID()}`,
      status: "completed",
      cutoff: new Date(),
      finishedAt: new Date(),
    },
  });
  // A webhook endpoint of the workspace; `.invalid` never resolves (RFC 6761), so nothing is sent.
  const webhook = await ok<{ id: string }>(
    "webhook endpoint",
    await h.http
      .post(`/api/workspaces/${onboarding.workspace_id}/webhooks`)
      .set(auth(token))
      .send({ url: "https://hooks.webhooks.invalid/research" }),
  );
  // A share link to the world's entity (its page is read by nobody here).
  const shareLink = await ok<{ id: string }>(
    "share link",
    await h.http.post("/api/share-links").set(auth(token)).send({ resource: "entity", id: entityId }),
  );
  // An author erasure of a handle nobody in the world used (it completes at once and deletes nothing).
  const erasure = await ok<{ id: string }>(
    "author erasure",
    await h.http
      .post(`/api/workspaces/${onboarding.workspace_id}/erasures`)
      .set(auth(token))
      .send({ platform: "reddit", author: `nobody-${sub}` }),
  );
  const spareWorkspaceId = await spareWorkspace(h, onboarding.workspace_id);
  // The spare entity's deletion, requested (its job waits for a worker): its progress has something to read.
  await ok("spare entity deletion", await h.http.delete(`/api/entities/${spareEntity.id}`).set(auth(token)), [202]);
  await ok("spare project deletion", await h.http.delete(`/api/projects/${spareProject.project_id}`).set(auth(token)), [202]);
  const noteRequestId = `notes-${randomUUID()}`;
  await h.deps.db.noteSync.create({
    data: { userId: user.id, entityId, requestId: noteRequestId, requestHash: "0".repeat(64), status: "queued" },
  });

  const world: World = {
    sub,
    token,
    userId: user.id,
    workspaceId: onboarding.workspace_id,
    projectId: onboarding.project_id,
    entityId,
    entityIds: onboarding.entity_ids,
    skillId,
    contentId,
    spareContentId,
    spareEntityId: spareEntity.id,
    spareProjectId: spareProject.project_id,
    spareInsightId: spareInsight.record.id,
    spareWorkspaceId,
    collectionJobId,
    researchJobId,
    analysisId: analysis.id,
    runId: run.id,
    noteRequestId,
    keys,
    ids: {},
  };
  world.ids = {
    entity_id: onboarding.entity_ids,
    parent_entity_id: [standalone.id],
    project_id: [onboarding.project_id],
    workspace_id: [onboarding.workspace_id],
    skill_id: [skillId],
    // The spare last: routes that read content_id[0] read the world's source, which nothing deletes.
    content_id: [...ingest.content_ids, spareContentId],
    job_id: [collectionJobId, researchJobId],
    analysis_id: [analysis.id],
    run_id: [run.id],
    key_id: Object.values(keys).map((k) => k.id),
    request_id: [noteRequestId],
    sweep_run_id: [sweepRun.id],
    object_id: [action.id],
    execution_id: [execution.id],
    insight_id: [insight.record.id],
    source_revision_id: insight.record.evidence.map((e) => e.source_revision_id),
    endpoint_id: [webhook.id],
    share_link_id: [shareLink.id],
    page_id: [page.id],
    erasure_id: [erasure.id],
    // The caller's own membership and user id: routes exercised with them may not demote or remove the
    // workspace's only owner (409) nor add anyone (already a member: 409), so the world stays as built.
    member_id: [ownMembership.id],
    user_id: [user.id],
  };
  return world;
}

/** The spare workspace (see `World.spareWorkspaceId`), with the members the world's workspace has now. */
async function spareWorkspace(h: Harness, workspaceId: string): Promise<string> {
  const spare = await h.deps.db.workspace.create({ data: { name: "Spare workspace" } });
  await h.deps.db.$executeRaw`
    INSERT INTO workspace_members (workspace_id, user_id, role, added_by)
    SELECT ${spare.id}::uuid, user_id, role, added_by FROM workspace_members WHERE workspace_id = ${workspaceId}::uuid`;
  return spare.id;
}

/** The world's ids as fast-check substitutions for fields and parameters of those names. */
export function knownIds(world: World): Known {
  const known: Known = {};
  for (const [name, values] of Object.entries(world.ids)) known[name] = () => fc.constantFrom(...values);
  // Generated requests may revoke keys: never the ones the tests authenticate with.
  known.key_id = () => fc.constantFrom(world.keys.revoked.id, world.keys.ingest.id);
  known.provided_sources = () => fc.constant([{ content_id: world.contentId }]);
  return known;
}

/**
 * Everything of the world's that a refused request must leave as it was: entities, keys, jobs,
 * analyses, runs, stored content, skills, routines, knowledge records, members, webhook endpoints, share links and
 * author erasures.
 */
export async function worldSnapshot(h: Harness, world: World): Promise<string> {
  const db = h.deps.db;
  const workspaceId = world.workspaceId;
  const [entities, keys, jobs, analyses, runs, content, skills, routines, knowledge, members, endpoints, links, erasures] =
    await Promise.all([
      db.entity.findMany({ where: { id: { in: world.entityIds } }, orderBy: { id: "asc" } }),
      db.apiKey.findMany({ where: { userId: world.userId }, orderBy: { id: "asc" } }),
      db.collectionJob.findMany({ where: { entityId: { in: world.entityIds } }, orderBy: { id: "asc" } }),
      db.analysis.findMany({ where: { workspaceId }, orderBy: { id: "asc" } }),
      db.workflowRun.findMany({ where: { workspaceId }, orderBy: { id: "asc" } }),
      db.content.count({ where: { workspaceId } }),
      db.skill.findMany({ where: { entityId: { in: world.entityIds } }, orderBy: { id: "asc" } }),
      db.skillRoutine.findMany({ where: { entityId: { in: world.entityIds } }, orderBy: { id: "asc" } }),
      db.knowledgeInsight.findMany({ where: { workspaceId }, orderBy: { id: "asc" } }),
      db.workspaceMember.findMany({ where: { workspaceId }, orderBy: { id: "asc" } }),
      db.webhookEndpoint.findMany({ where: { workspaceId }, orderBy: { id: "asc" } }),
      db.shareLink.findMany({ where: { workspaceId }, orderBy: { id: "asc" } }),
      db.authorErasure.findMany({ where: { workspaceId }, orderBy: { id: "asc" } }),
    ]);
  return JSON.stringify(
    { entities, keys, jobs, analyses, runs, content, skills, routines, knowledge, members, endpoints, links, erasures },
    (_k, v) => (typeof v === "bigint" ? String(v) : v),
  );
}
