import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import { sweepProcessor } from "../../workers/sweeps.js";
import { createKeyFor, source } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { addMember, auth, createTeam, type Team } from "../knowledge/support.js";
import { type Listening, listen } from "../reliability/support/http.js";
import { type Connected, connect, ok, refused } from "./support.js";

/** `ingest`, one call per destination over MCP, each writing what its HTTP route writes. */
let h: Harness;
let server: Listening;
let team: Team;
let connected: Connected;
let client: Client;

beforeAll(async () => {
  h = await createHarness({ SWEEP_WAIT_MS: "10000" });
  server = await listen(h.app);
  team = await createTeam(h);
  connected = await connect(server.url, { bearer: team.token });
  client = connected.client;
});
afterAll(async () => {
  await connected?.close();
  await server?.close();
  await h?.close();
});

describe("ingest over MCP", () => {
  it("context (the default): saves a curated page of the caller, then replaces it at the same path", async () => {
    const saved = await ok(client, "ingest", { title: "Onboarding brief", content: "Where new teams get stuck.", tags: ["onboarding"] });
    expect(saved).toMatchObject({ ingested: true, created: true, version: 1, title: "Onboarding brief", tags: ["onboarding"] });
    const replaced = await ok(client, "ingest", {
      destination: "context",
      title: "Onboarding brief",
      content: "Where new teams get stuck, revised.",
      path: saved.path,
    });
    expect(replaced).toMatchObject({ ingested: true, created: false, version: 2, id: saved.id });
    const page = await h.deps.db.page.findUniqueOrThrow({ where: { id: saved.id as string } });
    expect(page.content).toBe("Where new teams get stuck, revised.");
  });

  it("sources and coverage: stores a batch with its comments, then records the attempt", async () => {
    const stored = await ok(client, "ingest", {
      destination: "sources",
      entity_id: team.entityId,
      sources: [source(1), source(2, { comments: [{ text: "Same here, the pricing is unclear.", author: "c1" }] })],
      collection_run_id: "mcp-run-1",
      collection_scope: "r/acme",
      coverage_state: "sampled",
    });
    expect(stored).toMatchObject({ inserted: 3, stored: 3, comments_inserted: 1, complete: true });
    const rows = await h.deps.db.content.findMany({ where: { id: { in: stored.content_ids as string[] } } });
    expect(rows.every((r) => r.entityId === team.entityId && r.collectionScope === "r/acme")).toBe(true);

    const coverage = await ok(client, "ingest", {
      destination: "coverage",
      entity_id: team.entityId,
      coverage: { platform: "reddit", collector: "reddit", run_id: "mcp-run-1", coverage_state: "sampled", query: "acme pricing" },
    });
    expect(coverage).toEqual({
      status: "recorded",
      entity_id: team.entityId,
      run_id: "mcp-run-1",
      coverage_state: "sampled",
      targets_recorded: 0,
      removed_after: { rows: 0, deleted: 0, author_erased: 0, retention: 0, last_removed_at: null },
    });

    // The route's own 422 for a source without content, located in the route's body.
    const invalid = await refused(client, "ingest", {
      destination: "sources",
      entity_id: team.entityId,
      sources: [{ platform: "reddit" }],
    });
    expect(invalid).toMatchObject({ status: 422, detail: [{ loc: ["body", "sources", 0, "content"], type: "missing" }] });
  });

  it("evidence: stores the approved record as an original and runs its evidence capture to completion; a retry repeats nothing", async () => {
    const workers = h.startWorkers({ "enrichment.content.v1": enrichmentProcessor, "sweep.run.v1": sweepProcessor });
    try {
      const args = {
        destination: "evidence",
        entity_id: team.entityId,
        title: "Workflow trace: export review",
        content: "The CSV export failed twice for the finance team. Support answered quickly and the retry worked.",
        source_platform: "claude_code",
        author: "claude",
        metadata: { task: "export review" },
      };
      const first = await ok(client, "ingest", args);
      expect(first).toMatchObject({
        ingested: true,
        destination: "evidence",
        entity_id: team.entityId,
        source_platform: "claude_code",
        collection_run_id: expect.stringMatching(/^mcp-evidence-[0-9a-f]{24}$/),
        ingest: { inserted: 1, stored: 1 },
        enrichment: { status: "completed", entity_id: team.entityId },
      });
      const contentId = (first.ingest as { content_ids: string[] }).content_ids[0]!;
      const row = await h.deps.db.content.findUniqueOrThrow({ where: { id: contentId }, include: { enrichment: true } });
      expect(row).toMatchObject({
        platform: "claude_code",
        collectionScope: "agent_approved",
        enrichment: { enrichedAt: expect.any(Date) },
      });
      expect(row.metadata).toMatchObject({ task: "export review", ingestion_contract: "mcp" });

      const again = await ok(client, "ingest", args);
      expect(again.ingest).toMatchObject({ inserted: 0, skipped_dedup: 1, content_ids: [contentId] });
      expect(again.enrichment).toEqual(first.enrichment);
    } finally {
      await workers.close();
    }
  });

  it("insight: creates a record whose quote is verbatim, revises it, and answers a stale revision with 409", async () => {
    const args = {
      destination: "insight",
      entity_id: team.entityId,
      request_id: randomUUID(),
      expected_revision: 0,
      title: "Export reliability",
      summary: "Exports fail before renewal.",
      evidence: [{ content_id: team.content.export, quote: "Export to CSV broke twice this week" }],
    };
    const created = await ok(client, "ingest", args);
    expect(created).toMatchObject({ saved: true, replayed: false, record: { revision: 1, title: "Export reliability" } });
    const id = (created.record as { id: string }).id;

    const revised = await ok(client, "ingest", {
      ...args,
      insight_id: id,
      request_id: randomUUID(),
      expected_revision: 1,
      title: "Export reliability before renewal",
    });
    expect(revised).toMatchObject({ saved: true, record: { id, revision: 2 } });

    const stale = await refused(client, "ingest", { ...args, insight_id: id, request_id: randomUUID(), expected_revision: 1 });
    expect(stale).toMatchObject({ status: 409, code: "conflict", current_revision: 2 });
    const invented = await refused(client, "ingest", {
      ...args,
      request_id: randomUUID(),
      evidence: [{ content_id: team.content.export, quote: "Export is perfect" }],
    });
    expect(invented).toMatchObject({ status: 422 });
  });

  it("skills and routine: replaces the entity's skills against the set last read, then schedules one", async () => {
    const before = (await h.http.get(`/api/entities/${team.entityId}/skills`).set(auth(team.token)).expect(200)).body as {
      skills: { id: string; revision: number; title: string }[];
    };
    const expected = before.skills.map((s) => ({ id: s.id, revision: s.revision }));
    const replaced = await ok(client, "ingest", {
      destination: "skills",
      entity_id: team.entityId,
      skills: [
        { title: "Export complaints", question: "What breaks in exports?", decision: "What to fix first", evidence: "Posts about exports" },
      ],
      expected_skills: expected,
    });
    const skills = replaced.skills as { id: string; name: string }[];
    expect(skills.map((s) => s.name)).toEqual(["Export complaints"]);

    const stale = await refused(client, "ingest", {
      destination: "skills",
      entity_id: team.entityId,
      skills: [],
      expected_skills: expected,
    });
    expect(stale).toMatchObject({ status: 409 });

    const routine = await ok(client, "ingest", {
      destination: "routine",
      entity_id: team.entityId,
      skill_id: skills[0]!.id,
      routine: { enabled: true, interval_hours: 168, source_mode: "saved", max_charge_cents: 200, expected_revision: 0 },
    });
    expect(routine).toMatchObject({
      skill_id: skills[0]!.id,
      revision: 1,
      enabled: true,
      interval_hours: 168,
      next_run_at: expect.any(String),
    });
    const missing = await refused(client, "ingest", { destination: "routine", entity_id: team.entityId, skill_id: skills[0]!.id });
    expect(missing).toMatchObject({ status: 422, detail: [{ loc: ["arguments", "routine"] }] });
  });

  it("observations (the default when observations are given): saves snapshots and answers the same ids on an identical retry", async () => {
    const args = {
      project_id: team.projectId,
      entity_id: team.entityId,
      observations: [
        {
          content: "Dashboard crashes when filtering by date",
          source_platform: "slack",
          source_id: "slack:T1:C1:1.1",
          observation_type: "bug_report",
        },
        { content: "Would love CSV export for analytics", observation_type: "feature_request" },
      ],
    };
    const saved = await ok(client, "ingest", args);
    expect(saved).toMatchObject({
      accepted: 2,
      project_id: team.projectId,
      observations: [
        { index: 0, status: "created" },
        { index: 1, status: "created" },
      ],
    });
    const retry = await ok(client, "ingest", { ...args, destination: "observations" });
    expect(retry.ids).toEqual(saved.ids);
  });

  it("takes an ingest-scoped key where the route does, and refuses it where the route needs '*'", async () => {
    const key = await createKeyFor(h, team.token, ["ingest"]);
    const keyed = await connect(server.url, { apiKey: key.raw_key });
    try {
      const stored = await ok(keyed.client, "ingest", { destination: "sources", entity_id: team.entityId, sources: [source(9)] });
      expect(stored).toMatchObject({ stored: 1 });
      const insight = await refused(keyed.client, "ingest", {
        destination: "insight",
        entity_id: team.entityId,
        request_id: randomUUID(),
        expected_revision: 0,
        title: "t",
        summary: "s",
        evidence: [{ content_id: team.content.export, quote: "Export to CSV" }],
      });
      expect(insight).toMatchObject({ status: 403, code: "insufficient_scope" });
      expect(await refused(keyed.client, "ingest", { title: "Page", content: "x" })).toMatchObject({
        status: 401,
        code: "bearer_required",
      });
    } finally {
      await keyed.close();
    }
    const usage = await h.http.get(`/api/user/keys/${key.key.id}/usage`).set(auth(team.token)).expect(200);
    expect(
      (usage.body.records as { method: string; route: string; status_code: number; scope_used: string | null }[])
        .map((r) => `${r.method} ${r.route} ${r.status_code} ${r.scope_used}`)
        .sort(),
    ).toEqual([
      "POST /agent/v1/context/save 401 null",
      "POST /agent/v1/ingest/content 200 ingest",
      "POST /agent/v1/knowledge/insights 403 null",
    ]);
  });

  it("acts with the member's role: a viewer's ingest is refused with 403 forbidden and stores nothing, an editor's is stored", async () => {
    const viewer = await addMember(h, team, "viewer");
    const editor = await addMember(h, team, "editor");
    const before = await h.deps.db.content.count({ where: { entityId: team.entityId } });
    const asViewer = await connect(server.url, { bearer: viewer.token });
    const asEditor = await connect(server.url, { bearer: editor.token });
    try {
      const sources = [source(901)];
      expect(await refused(asViewer.client, "ingest", { destination: "sources", entity_id: team.entityId, sources })).toMatchObject({
        status: 403,
        code: "forbidden",
      });
      expect(await h.deps.db.content.count({ where: { entityId: team.entityId } })).toBe(before);
      // Reads are every member's.
      const recalled = await ok(asViewer.client, "recall", { mode: "entities" });
      expect(JSON.stringify(recalled)).toContain(team.entityId);
      const stored = await ok(asEditor.client, "ingest", { destination: "sources", entity_id: team.entityId, sources });
      expect(stored).toMatchObject({ inserted: 1 });
    } finally {
      await asViewer.close();
      await asEditor.close();
    }
  });
});
