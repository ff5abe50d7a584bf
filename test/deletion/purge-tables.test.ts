import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { purgeWorkspace } from "../../src/governance/deletion/purge.js";
import { runRetentionPass } from "../../src/governance/deletion/retention.js";
import { deleteWorkspace } from "../../src/governance/deletion/workspaces.js";
import { Prisma } from "../../src/platform/db.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { listen, runAnalysis } from "../analysis/sse-client.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { auth, createTeam, enrich, ingest, type Team } from "./support.js";

/**
 * The purge of a deleted workspace (src/governance/deletion/purge.ts) names its tables one by one; this test keeps
 * that list honest against the schema as it grows. It reads the database's own catalogue:
 *
 * - every table with a `workspace_id`, `entity_id`, `project_id` or `scope_id` column, and every table
 *   below one of those (or below `workspaces`) through a foreign key, must hold a row of the seeded
 *   workspace before the purge: a table added later fails here until this test seeds it (and then
 *   fails below until the purge removes it);
 * - after the purge no uuid column of any table holds the id of the workspace or of any row that was
 *   the workspace's (found before the purge by following every uuid column from the workspace's id),
 *   and no text or JSON column mentions one.
 *
 * Outside the workspace only its `workspace_deletions` record stays (ids, times and counts), and users'
 * own saved context pages, whose link to a purged project is cleared.
 */
const SCOPE_COLUMNS = ["workspace_id", "entity_id", "project_id", "scope_id"];
/** What outlives the purge on purpose (see docs/api.md, "Delete or restore a workspace"). */
const KEPT = new Set(["workspace_deletions", "pages", "_prisma_migrations"]);

let h: Harness;
let base: string;
let closeServer: () => Promise<void>;

beforeAll(async () => {
  // Erasures always run as a job (none runs here), so the erasure keeps its item list.
  h = await createHarness({ ERASURE_SYNC_LIMIT: "0" });
  ({ baseUrl: base, close: closeServer } = await listen(h));
  h.startWorkers({ "analysis.run.v1": analysisProcessor });
}, 60_000);
afterAll(async () => {
  await closeServer?.();
  await h?.close();
});

const ident = (name: string) => Prisma.raw(`"${name.replaceAll('"', '""')}"`);

interface Column {
  table: string;
  column: string;
  type: string;
}

async function columns(): Promise<Column[]> {
  return h.deps.db.$queryRaw<Column[]>`
    SELECT c.table_name AS "table", c.column_name AS "column",
      CASE WHEN c.data_type = 'ARRAY' THEN c.udt_name ELSE c.data_type END AS "type"
    FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
    ORDER BY 1, 2`;
}

/** Tables with a scope column, and the tables below them (or below `workspaces`) through foreign keys. */
async function scopedTables(all: Column[]): Promise<string[]> {
  const fks = await h.deps.db.$queryRaw<{ child: string; parent: string }[]>`
    SELECT DISTINCT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
    FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
    WHERE c.contype = 'f' AND n.nspname = 'public'`;
  const scoped = new Set(all.filter((c) => SCOPE_COLUMNS.includes(c.column) && c.type === "uuid").map((c) => c.table));
  scoped.add("workspaces");
  for (let grew = true; grew; ) {
    grew = false;
    for (const { child, parent } of fks) {
      const name = child.replaceAll('"', "");
      if (scoped.has(parent.replaceAll('"', "")) && !scoped.has(name)) {
        scoped.add(name);
        grew = true;
      }
    }
  }
  return [...scoped].filter((t) => !KEPT.has(t)).sort();
}

/**
 * The ids of everything that is the workspace's: its id, then the `id` of every row (of a table not
 * kept) that has a uuid column holding one of the ids found so far, until nothing new is found.
 */
async function workspaceIds(all: Column[], workspaceId: string): Promise<Set<string>> {
  const found = new Set([workspaceId]);
  const uuidColumns = all.filter((c) => c.type === "uuid" && !KEPT.has(c.table));
  const withId = new Set(uuidColumns.filter((c) => c.column === "id").map((c) => c.table));
  for (let grew = true; grew; ) {
    grew = false;
    const ids = [...found];
    for (const { table, column } of uuidColumns) {
      if (!withId.has(table) || column === "id") continue;
      const rows = await h.deps.db.$queryRaw<{ id: string }[]>`
        SELECT id::text AS id FROM ${ident(table)} WHERE ${ident(column)} = ANY(${ids}::uuid[])`;
      for (const { id } of rows) {
        if (!found.has(id)) {
          found.add(id);
          grew = true;
        }
      }
    }
  }
  return found;
}

/** `table.column` of every uuid column (outside the kept tables) holding one of `ids`. */
async function uuidColumnsNaming(all: Column[], ids: string[]): Promise<string[]> {
  const hits: string[] = [];
  for (const { table, column } of all.filter((c) => c.type === "uuid" && !KEPT.has(c.table))) {
    const [row] = await h.deps.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM ${ident(table)} WHERE ${ident(column)} = ANY(${ids}::uuid[])`;
    if ((row?.n ?? 0) > 0) hits.push(`${table}.${column}`);
  }
  return hits;
}

/** `table.column` of every text, JSON or text-array column (outside the kept tables) mentioning one of `ids`. */
async function textColumnsMentioning(all: Column[], ids: string[]): Promise<string[]> {
  const pattern = ids.join("|");
  const hits: string[] = [];
  const textual = ["text", "character varying", "json", "jsonb", "_text", "_varchar", "_uuid"];
  for (const { table, column } of all.filter((c) => textual.includes(c.type) && !KEPT.has(c.table))) {
    const [row] = await h.deps.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM ${ident(table)} WHERE ${ident(column)}::text ~* ${pattern}`;
    if ((row?.n ?? 0) > 0) hits.push(`${table}.${column}`);
  }
  return hits;
}

/** Every kind of row a workspace can hold, through the routes where one exists. */
async function seed(team: Team & { projectId: string; competitorId: string; skillId: string }) {
  const { db } = h.deps;
  const post = (path: string, body: object) => h.http.post(path).set(auth(team.token)).send(body);
  const expectOk = (res: { status: number; body: unknown }, what: string) =>
    expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBeLessThan(300);

  // Originals, enriched (opinion units and rollups), with a comment; one deleted (a tombstone).
  const stored = await ingest(h, team.token, team.entityId, [
    {
      platform: "reddit",
      author: "forgettable_author",
      content: "The export keeps crashing on large files and support was slow to answer.",
      comments: [{ text: "Same here: the export crashes every single time." }],
    },
    { platform: "reddit", content: "The export is fast now and the new editor is great." },
    { platform: "hackernews", content: "Pricing is confusing and the export is slow." },
    { platform: "hackernews", content: "A post that is deleted on purpose." },
  ]);
  await enrich(h, stored.content_ids);
  const [source, , , doomed] = stored.parent_content_ids as [string, string, string, string];
  expect((await h.http.delete(`/agent/v1/content/${doomed}`).set(auth(team.token))).status).toBe(200);
  await ingest(h, team.token, team.competitorId, [{ platform: "reddit", content: "The competitor's export is slow too." }]);

  // An analysis (events, insights, insight evidence, its generated knowledge record).
  const analysis = await runAnalysis(base, team, "What do people say about the export?", "brief");
  expect(analysis.status).toBe("completed");

  // Knowledge records (revisions, citations, snapshots, receipts, change feed); one deleted (a deletion record).
  const record = async (title: string) => {
    const res = await post("/agent/v1/knowledge/insights", {
      entity_id: team.entityId,
      request_id: randomUUID(),
      expected_revision: 0,
      title,
      summary: `${title}, say people.`,
      evidence: [{ content_id: source, quote: "The export keeps crashing" }],
    });
    expectOk(res, "knowledge record");
    return res.body.record.id as string;
  };
  const insightId = await record("Exports crash");
  const deletedRecord = await record("Exports crash again");
  expectOk(
    await h.http.delete(`/agent/v1/knowledge/insights/${deletedRecord}?entity_id=${team.entityId}`).set(auth(team.token)),
    "record delete",
  );

  // An action on the record, with an execution.
  const action = await post("/api/sweeps/objects", {
    entity_id: team.entityId,
    insight_id: insightId,
    object_type: "workflow",
    status: "acting",
  });
  expectOk(action, "action");
  expectOk(
    await post(`/api/sweeps/objects/${action.body.id}/executions`, {
      executor_platform: "codex",
      approved_for_execution: true,
      steps: ["Draft it"],
    }),
    "execution",
  );

  // Coverage (with a target), a collection job (queued; no collector runs here).
  expectOk(
    await post("/agent/v1/ingest/coverage", {
      entity_id: team.entityId,
      collector: "reddit",
      coverage_state: "sampled",
      targets: [{ target: "r/export", items_found: 2, items_stored: 2 }],
    }),
    "coverage",
  );
  expectOk(
    await post("/agent/v1/ingest/collection/jobs", {
      entity_id: team.entityId,
      objective: "Why do exports crash?",
      platforms: ["hackernews"],
      collection_only: true,
    }),
    "collection job",
  );

  // Credits, a quote, a workflow run (queued) and a job staged for it.
  await runAdminCommand(h.deps, ["grant-credits", team.workspaceId, "1000"]);
  const quote = await h.http.get(`/api/entities/${team.entityId}/skills/${team.skillId}/quote?source_mode=saved`).set(auth(team.token));
  expectOk(quote, "quote");
  const run = await h.http
    .post(`/api/entities/${team.entityId}/skills/${team.skillId}/runs`)
    .set(auth(team.token))
    .set("Idempotency-Key", `run-${randomUUID()}`)
    .send({ scope_hash: quote.body.scope_hash, max_charge_credits: quote.body.max_charge_credits });
  expectOk(run, "run");
  const runId = run.body.id as string;
  await db.jobOutbox.create({ data: { jobName: "workflow.run.v1", payload: { runId }, jobId: `purge-test-${randomUUID()}` } });

  // A routine with an occurrence.
  const skill = await db.skill.findFirstOrThrow({ where: { entityId: team.entityId } });
  const routine = await db.skillRoutine.create({
    data: {
      skillId: skill.id,
      skillKey: skill.key,
      entityId: team.entityId,
      workspaceId: team.workspaceId,
      createdBy: team.userId,
      updatedBy: team.userId,
      enabled: true,
      intervalHours: 24,
      sourceMode: "saved",
      maxChargeCents: 1000,
      nextRunAt: new Date(Date.now() + 3_600_000),
    },
  });
  await db.routineOccurrence.create({ data: { routineId: routine.id, occurrenceAt: new Date(), outcome: "dispatched", runId } });

  // Meeting-note sync and summary, an evidence capture run.
  await db.noteSync.create({ data: { userId: team.userId, entityId: team.entityId, requestId: randomUUID(), requestHash: "h" } });
  await db.knowledge.create({
    data: {
      entityId: team.entityId,
      workspaceId: team.workspaceId,
      kind: "meeting_summary",
      platform: "meetingnotes",
      externalId: "not_purgetest000001",
      content: "A summary of the export review.",
    },
  });
  await db.sweepRun.create({ data: { userId: team.userId, entityId: team.entityId, idempotencyKey: randomUUID(), cutoff: new Date() } });

  // Webhook endpoint with a delivery, a share link, an invitation, an author erasure (running, with its list).
  const hook = await post(`/api/workspaces/${team.workspaceId}/webhooks`, { url: "https://hooks.webhooks.invalid/purge" });
  expectOk(hook, "webhook");
  await db.webhookDelivery.create({ data: { endpointId: hook.body.id, messageId: randomUUID(), eventType: "test.event", body: "{}" } });
  expectOk(await post("/api/share-links", { resource: "entity", id: team.entityId }), "share link");
  expectOk(await post(`/api/workspaces/${team.workspaceId}/members`, { email: "invitee@example.com", role: "viewer" }), "invitation");
  const erasure = await post(`/api/workspaces/${team.workspaceId}/erasures`, { platform: "reddit", author: "forgettable_author" });
  expect(erasure.status, JSON.stringify(erasure.body)).toBe(202);

  // Retention (a setting and a pass that found nothing old).
  expectOk(await h.http.patch(`/api/workspaces/${team.workspaceId}`).set(auth(team.token)).send({ retention_days: 3650 }), "retention");
  await runRetentionPass(h.deps, 100);

  // A user's own page in the workspace's project: it stays, unlinked.
  const page = await post("/agent/v1/context/save", { title: "Export notes", content: "Notes on the export.", project_id: team.projectId });
  expectOk(page, "page");
  return { pageId: page.body.id as string };
}

describe("the purge of a deleted workspace", () => {
  it("leaves no row of the workspace in any table, whichever tables the schema has", async () => {
    const ownerSub = `owner-${randomUUID()}`;
    const token = await h.token(ownerSub);
    const onboarding = await h.http
      .post("/api/entities/onboarding")
      .set(auth(token))
      .send({
        request_id: randomUUID(),
        company: { name: "Purgeco", keywords: ["export"], platforms: ["reddit", "hackernews"] },
        competitors: [{ name: "Rivalco" }],
        research_objectives: [{ id: "obj-1", title: "Exports", question: "What do people say about the export?" }],
      });
    expect(onboarding.status, JSON.stringify(onboarding.body)).toBe(201);
    const userId = (await h.deps.db.user.findUniqueOrThrow({ where: { sub: ownerSub } })).id;
    const team = {
      token,
      sub: ownerSub,
      userId,
      workspaceId: onboarding.body.workspace_id as string,
      entityId: onboarding.body.company.id as string,
      projectId: onboarding.body.project_id as string,
      competitorId: onboarding.body.competitors[0].id as string,
      skillId: onboarding.body.research_objectives[0].skill_id as string,
    };
    const other = await createTeam(h, "Keepco");
    const kept = await ingest(h, other.token, other.entityId, [{ platform: "reddit", content: "Keepco's export works." }]);
    const { pageId } = await seed(team);

    const all = await columns();
    const ids = await workspaceIds(all, team.workspaceId);
    expect(ids.has(other.workspaceId) || ids.has(other.entityId) || ids.has(kept.content_ids[0] ?? "")).toBe(false);
    const idList = [...ids];
    // Every table that can hold the workspace's rows holds one now (else: seed it above).
    const required = await scopedTables(all);
    expect(required.length).toBeGreaterThan(30);
    const seeded = new Set((await uuidColumnsNaming(all, idList)).map((c) => c.split(".")[0]));
    expect(
      required.filter((t) => !seeded.has(t)),
      "tables without a row of the seeded workspace",
    ).toEqual([]);

    const zeroGrace = { ...h.deps, config: { ...h.config, WORKSPACE_DELETE_GRACE_HOURS: 0 } };
    await deleteWorkspace(zeroGrace, team.userId, team.workspaceId);
    expect(await purgeWorkspace(h.deps, team.workspaceId, 2)).toBe(true);

    expect(await uuidColumnsNaming(all, idList), "uuid columns still naming the workspace's rows").toEqual([]);
    expect(await textColumnsMentioning(all, idList), "text and JSON columns still mentioning the workspace's rows").toEqual([]);
    // What stays outside the workspace: its deletion record, and the user's page without its project.
    expect(await h.deps.db.workspaceDeletion.findFirstOrThrow({ where: { workspaceId: team.workspaceId } })).toMatchObject({
      status: "purged",
    });
    expect(await h.deps.db.page.findUniqueOrThrow({ where: { id: pageId } })).toMatchObject({ projectId: null, userId: team.userId });
    // The other workspace is untouched.
    expect(await h.deps.db.content.count({ where: { workspaceId: other.workspaceId } })).toBe(1);
    expect(await h.deps.db.workspace.findUniqueOrThrow({ where: { id: other.workspaceId } })).toMatchObject({ state: "active" });
  }, 120_000);
});
