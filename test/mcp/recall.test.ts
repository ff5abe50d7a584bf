import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { auth, createTeam, type Team } from "../knowledge/support.js";
import { type Listening, listen } from "../reliability/support/http.js";
import { type Connected, connect, ok } from "./support.js";

/**
 * `recall`, one call per mode over MCP, each answering what its HTTP route answers to the
 * same caller (read through supertest beside it).
 */
let h: Harness;
let server: Listening;
let team: Team;
let connected: Connected;
let client: Client;
let insightId: string;
let sourceRevisionId: string;

const get = async (path: string) => {
  const res = await h.http.get(path).set(auth(team.token));
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body as Record<string, unknown>;
};

/** The same answer read a moment later: windows and generation times are computed from now. */
const atAnyTime = (body: unknown) => JSON.parse(JSON.stringify(body).replace(/"\d{4}-\d\d-\d\dT[\d:.]+Z"/g, '"<time>"'));

beforeAll(async () => {
  h = await createHarness();
  server = await listen(h.app);
  team = await createTeam(h);
  await h.http
    .post("/agent/v1/context/save")
    .set(auth(team.token))
    .send({ title: "Pricing interview notes", content: "Buyers find the pricing tiers hard to compare.", tags: ["pricing"] })
    .expect(200);
  const created = await h.http
    .post("/agent/v1/knowledge/insights")
    .set(auth(team.token))
    .send({
      entity_id: team.entityId,
      request_id: randomUUID(),
      expected_revision: 0,
      title: "Pricing page clarity",
      summary: "A buyer finds the pricing page confusing.",
      tags: ["pricing"],
      evidence: [{ content_id: team.content.pricing, quote: "the pricing page is confusing" }],
    })
    .expect(201);
  insightId = created.body.record.id;
  sourceRevisionId = created.body.record.evidence[0].source_revision_id;
  await h.http
    .post("/api/sweeps/objects")
    .set(auth(team.token))
    .send({ entity_id: team.entityId, insight_id: insightId, object_type: "pain_point" })
    .expect(201);
  connected = await connect(server.url, { bearer: team.token });
  client = connected.client;
});
afterAll(async () => {
  await connected?.close();
  await server?.close();
  await h?.close();
});

describe("recall over MCP", () => {
  it("search: the caller's context pages, as GET /agent/v1/context/recall answers (limit 20 unless told)", async () => {
    const answer = await ok(client, "recall", { query: "pricing tiers" });
    expect(answer).toEqual(await get("/agent/v1/context/recall?query=pricing%20tiers&limit=20"));
    expect(answer.results).toEqual([expect.objectContaining({ title: "Pricing interview notes" })]);
    // The reference client keeps a larger limit within the route's 20.
    expect(await ok(client, "recall", { mode: "search", query: "pricing tiers", limit: 50 })).toEqual(answer);
  });

  it("discover: public evidence search, as POST /agent/v1/search answers", async () => {
    const answer = await ok(client, "recall", { mode: "discover", query: "pricing page confusing", platforms: ["reddit"], limit: 5 });
    const http = await h.http
      .post("/agent/v1/search")
      .set(auth(team.token))
      .send({ query: "pricing page confusing", platforms: ["reddit"], limit: 5 })
      .expect(200);
    expect(answer).toEqual(http.body);
    expect(answer.results).toEqual(expect.arrayContaining([expect.objectContaining({ content_id: team.content.pricing })]));
  });

  it("connection: the connection check, marked as made over MCP", async () => {
    const answer = await ok(client, "recall", { mode: "connection", entity_id: team.entityId });
    expect(answer).toEqual({ ...(await get(`/agent/v1/connection?entity_id=${team.entityId}`)), client_interface: "mcp" });
    expect(answer).toMatchObject({ contract_version: 1, status: "connected", entity_id: team.entityId, credential: "bearer" });
  });

  it("entities: the caller's entities with their count", async () => {
    const answer = await ok(client, "recall", { mode: "entities" });
    const listed = (await h.http.get("/api/entities").set(auth(team.token)).expect(200)).body as unknown[];
    expect(answer).toEqual({ entities: listed, count: listed.length });
    expect(answer.count).toBe(2);
  });

  it("collection_plan: the entity's saved scope and tasks", async () => {
    const answer = await ok(client, "recall", { mode: "collection_plan", entity_id: team.entityId });
    expect(atAnyTime(answer)).toEqual(atAnyTime(await get(`/agent/v1/ingest/collection-plan?entity_id=${team.entityId}`)));
    expect(answer).toMatchObject({ entity_id: team.entityId, starts_collection: false });
  });

  it("skills, routines, skill_runs: the entity's saved skills, routines and runs", async () => {
    expect(await ok(client, "recall", { mode: "skills", entity_id: team.entityId })).toEqual(
      await get(`/api/entities/${team.entityId}/skills`),
    );
    expect(await ok(client, "recall", { mode: "routines", entity_id: team.entityId })).toEqual(
      await get(`/api/entities/${team.entityId}/skill-routines`),
    );
    expect(await ok(client, "recall", { mode: "skill_runs", entity_id: team.entityId })).toEqual(
      await get(`/api/entities/${team.entityId}/skill-runs`),
    );
  });

  it("knowledge: the scope's records, and one record with its evidence by insight_id", async () => {
    const listed = await ok(client, "recall", { mode: "knowledge", entity_id: team.entityId, tag: "pricing", limit: 10 });
    expect(listed).toEqual(await get(`/agent/v1/knowledge/insights?entity_id=${team.entityId}&tag=pricing&limit=10`));
    expect((listed.insights as { id: string }[]).map((r) => r.id)).toEqual([insightId]);

    const read = await ok(client, "recall", { mode: "knowledge", entity_id: team.entityId, insight_id: insightId, include_evidence: true });
    expect(read).toEqual(await get(`/agent/v1/knowledge/insights/${insightId}?entity_id=${team.entityId}`));
    expect(read.resolved_evidence).toEqual([expect.objectContaining({ quote: "the pricing page is confusing", available: true })]);
  });

  it("knowledge_context and knowledge_changes: bounded Markdown, and the revision feed after a checkpoint", async () => {
    const context = await ok(client, "recall", { mode: "knowledge_context", entity_id: team.entityId, max_chars: 2000 });
    expect(context).toEqual(await get(`/agent/v1/knowledge/context?entity_id=${team.entityId}&max_chars=2000`));
    expect(context.markdown).toContain("the pricing page is confusing");

    const changes = await ok(client, "recall", { mode: "knowledge_changes", entity_id: team.entityId, after: "0" });
    expect(changes).toEqual(await get(`/agent/v1/knowledge/changes?entity_id=${team.entityId}&after=0`));
    expect(changes.next_after).toEqual(expect.any(String));
  });

  it("knowledge_source: the originals, one original by content_id, one snapshot by source_revision_id", async () => {
    const list = await ok(client, "recall", { mode: "knowledge_source", entity_id: team.entityId, limit: 2 });
    expect(list).toEqual(await get(`/agent/v1/knowledge/content?entity_id=${team.entityId}&limit=2`));

    const original = await ok(client, "recall", { mode: "knowledge_source", entity_id: team.entityId, content_id: team.content.pricing });
    expect(original).toEqual(await get(`/agent/v1/knowledge/content/${team.content.pricing}?entity_id=${team.entityId}`));

    const snapshot = await ok(client, "recall", {
      mode: "knowledge_source",
      entity_id: team.entityId,
      source_revision_id: sourceRevisionId,
    });
    expect(snapshot).toEqual(await get(`/agent/v1/knowledge/sources/${sourceRevisionId}?entity_id=${team.entityId}`));
  });

  it("intelligence: the entity's readout, with the window kept within 7–365 days as the reference client does", async () => {
    const answer = await ok(client, "recall", { mode: "intelligence", entity_id: team.entityId, window_days: 1000 });
    expect(atAnyTime(answer)).toEqual(atAnyTime(await get(`/agent/v1/intelligence/summary?entity_id=${team.entityId}&window_days=365`)));
    expect(answer).toMatchObject({ entity_id: team.entityId, window_days: 365 });
  });

  it("actions: the entity's saved actions with their evidence", async () => {
    const answer = await ok(client, "recall", { mode: "actions", entity_id: team.entityId, status: "open" });
    expect(answer).toEqual(await get(`/api/sweeps/objects?entity_id=${team.entityId}&status=open&limit=50`));
    expect(answer.objects).toEqual([expect.objectContaining({ object_type: "pain_point" })]);
  });
});
