import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import { sweepProcessor } from "../../workers/sweeps.js";
import { bearer } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * The agent client (`@crowdlisten/harness` 2.2.3, unchanged) against this service, over real
 * HTTP: what it reads and writes around the evidence (recall modes collection_plan, actions and
 * intelligence; ingest destinations evidence and observations). The client reads its base URL
 * once, when its module loads.
 */
type HandleV2Tool = (sb: unknown, userId: string, name: string, args: Record<string, unknown>, accessToken: string) => Promise<string>;

let h: Harness;
let server: Server;
let handleV2Tool: HandleV2Tool;
let token: string;
let userId: string;
let company: { id: string };
let competitor: { id: string };
let projectId: string;

const call = async (name: string, args: Record<string, unknown>) => JSON.parse(await handleV2Tool(null, userId, name, args, token));

beforeAll(async () => {
  h = await createHarness({ SWEEP_WAIT_MS: "10000" });
  server = h.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  process.env.CROWDLISTEN_AGENT_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ({ handleV2Tool } = (await import("@crowdlisten/harness/dist/harness-v2.js")) as unknown as { handleV2Tool: HandleV2Tool });
  token = await h.token();
  const onboarded = await h.http
    .post("/api/entities/onboarding")
    .set(bearer(token))
    .send({
      request_id: randomUUID(),
      company: { name: "Acme Notes", url: "https://acme.example.com", keywords: ["acme"], platforms: ["hackernews", "reddit"] },
      competitors: [{ name: "Globex", keywords: ["globex notes"] }],
    })
    .expect(201);
  company = onboarded.body.company;
  competitor = onboarded.body.competitors[0];
  projectId = onboarded.body.project_id;
  userId = (await h.deps.db.user.findFirstOrThrow({ where: { memberships: { some: { workspaceId: onboarded.body.workspace_id } } } })).id;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await h.close();
});

describe("the agent client's collection plan (recall collection_plan)", () => {
  it("reads the saved scope and tasks of a company and of its competitor", async () => {
    const plan = await call("recall", { mode: "collection_plan", entity_id: company.id });
    expect(plan).toMatchObject({
      entity_id: company.id,
      subject: { name: "Acme Notes" },
      competitors: [{ id: competitor.id, name: "Globex" }],
      scope: { platforms: ["hackernews", "reddit"] },
      starts_collection: false,
    });
    expect(plan.tasks.map((t: { platform: string; query: string }) => [t.platform, t.query])).toEqual([
      ["hackernews", "Acme Notes acme"],
      ["reddit", '"Acme Notes" OR acme'],
    ]);
    const theirs = await call("recall", { mode: "collection_plan", entity_id: competitor.id });
    expect(theirs.tasks.map((t: { query: string }) => t.query)).toEqual(["Globex globex notes", 'Globex OR "globex notes"']);
    // The client refuses a plan without one entity before calling; an unknown entity is the service's 404.
    await expect(call("recall", { mode: "collection_plan", entity_id: randomUUID() })).rejects.toThrow(/"status":404/);
    expect(projectId).toBeTruthy();
  });
});

describe("the agent client's evidence capture (ingest destination evidence)", () => {
  it("stores the original, runs the capture to completion, and answers the same run on a retry", async () => {
    // Both processors of the enrichment queue run, as in a worker process.
    const workers = h.startWorkers({ "enrichment.content.v1": enrichmentProcessor, "sweep.run.v1": sweepProcessor });
    try {
      const args = {
        destination: "evidence",
        entity_id: company.id,
        title: "Workflow trace: export review",
        content: "The CSV export failed twice for the finance team. Support answered quickly and the retry worked.",
        source_platform: "agent",
        author: "codex",
        metadata: { task: "export review" },
      };
      const first = await call("ingest", args);
      expect(first).toMatchObject({
        ingested: true,
        destination: "evidence",
        entity_id: company.id,
        source_platform: "agent",
        collection_run_id: expect.stringMatching(/^harness-evidence-[0-9a-f]{24}$/),
        ingest: { inserted: 1, stored: 1 },
        enrichment: { status: "completed", entity_id: company.id, idempotency_key: first.collection_run_id },
      });
      const stats = first.enrichment.statistics;
      expect(stats.originals).toBe(1);
      expect(stats.enriched + stats.already_enriched).toBe(1);
      expect(stats.remaining).toBe(0);
      const contentId = first.ingest.content_ids[0];
      expect(await h.deps.db.opinionUnit.count({ where: { contentId } })).toBeGreaterThan(0);
      const row = await h.deps.db.content.findUniqueOrThrow({ where: { id: contentId } });
      expect(row).toMatchObject({ collectionScope: "agent_approved", coverageState: "bounded", enrichedAt: expect.any(Date) });

      // The same evidence again: the original is reused and the capture answers the same run.
      const again = await call("ingest", args);
      expect(again.ingest).toMatchObject({ inserted: 0, skipped_dedup: 1, content_ids: [contentId] });
      expect(again.enrichment).toEqual(first.enrichment);
    } finally {
      await workers.close();
    }
  });
});
