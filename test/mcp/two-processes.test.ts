import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { type AppDeps, closeDeps, createDeps } from "../../src/platform/deps.js";
import { whenReady } from "../../src/platform/redis.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import { CORPUS } from "../analysis/corpus.js";
import { createTenant, storeSources, type Tenant, waitFor } from "../analysis/fixtures.js";
import { createKeyFor, source } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { type Listening, listen } from "../reliability/support/http.js";
import { type Connected, callTool, connect, ok } from "./support.js";

/**
 * Two web processes (two apps, each with its own database pool, Redis connections and
 * subscriber, on two ports; the same PostgreSQL and Redis) and the worker: sessions on each
 * at once, and one session whose requests alternate between them. Nothing of a session lives
 * in a web process, so either answers any call.
 */
let h: Harness;
let second: AppDeps;
let web1: Listening;
let web2: Listening;
let tenant: Tenant;

beforeAll(async () => {
  h = await createHarness({ SSE_HEARTBEAT_MS: "200" });
  second = createDeps(h.config, "web-2");
  await whenReady(second.redis, 5000);
  web1 = await listen(h.app);
  web2 = await listen(createApp(second));
  tenant = await createTenant(h);
  h.startWorkers({ "analysis.run.v1": analysisProcessor, "enrichment.content.v1": enrichmentProcessor });
  const ids = await storeSources(h, tenant, CORPUS);
  await waitFor(async () =>
    (await h.deps.db.content.count({ where: { id: { in: ids }, enrichment: { enrichedAt: { not: null } } } })) === ids.length
      ? true
      : undefined,
  );
});
afterAll(async () => {
  await web2?.close();
  await web1?.close();
  if (second) await closeDeps(second);
  await h?.close();
});

describe("two web processes", () => {
  it("serve concurrent sessions, each streaming an analysis with progress while the other writes and reads", async () => {
    const key = await createKeyFor(h, tenant.token, ["*"]);
    const sessions: Connected[] = await Promise.all([
      connect(web1.url, { bearer: tenant.token }),
      connect(web2.url, { bearer: tenant.token }),
      connect(web1.url, { apiKey: key.raw_key }),
      connect(web2.url, { apiKey: key.raw_key }),
    ]);
    const [a, b, keyedA, keyedB] = sessions.map((s) => s.client) as [Client, Client, Client, Client];
    try {
      const progressA: Progress[] = [];
      const progressB: Progress[] = [];
      const question = (n: number) => ({
        question: "What do users think about Acme pricing?",
        entity_id: tenant.entityId,
        request_id: `two-web-${n}-${randomUUID()}`,
      });
      const [runA, runB, stored, entitiesA] = await Promise.all([
        callTool(a, "analyze", question(1), { onprogress: (p) => progressA.push(p) }),
        callTool(b, "analyze", question(2), { onprogress: (p) => progressB.push(p) }),
        ok(keyedB, "ingest", { destination: "sources", entity_id: tenant.entityId, sources: [source(101), source(102)] }),
        ok(keyedA, "recall", { mode: "entities" }),
      ]);
      for (const [run, progress] of [
        [runA, progressA],
        [runB, progressB],
      ] as const) {
        expect(run.isError, run.text).toBe(false);
        expect(run.body).toMatchObject({ status: "completed", analysis_id: expect.any(String) });
        expect(progress.at(-1)).toMatchObject({ progress: 100, total: 100 });
      }
      expect(runA.body.analysis_id).not.toBe(runB.body.analysis_id);
      expect(entitiesA.count).toBe(2);

      // What one process stored, the other reads.
      const contentIds = stored.content_ids as string[];
      const original = await ok(keyedA, "recall", { mode: "knowledge_source", entity_id: tenant.entityId, content_id: contentIds[0] });
      expect(original).toMatchObject({ content_id: contentIds[0] });
      // Both processes recorded the key's calls in one usage log.
      const usage = await h.http.get(`/api/user/keys/${key.key.id}/usage`).set("Authorization", `Bearer ${tenant.token}`).expect(200);
      expect((usage.body.records as { route: string }[]).map((r) => r.route).sort()).toEqual([
        "/agent/v1/ingest/content",
        "/agent/v1/knowledge/content/:content_id",
        "/api/entities",
      ]);
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
  });

  it("answer one session whose requests alternate between them, a streamed analysis included", async () => {
    const targets = [web1.url, web2.url];
    const served: string[] = [];
    let turn = 0;
    const client = new Client({ name: "alternating", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${web1.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${tenant.token}` } },
      fetch: (input, init) => {
        const target = targets[turn++ % targets.length]!;
        served.push(target);
        return fetch(String(input).replace(web1.url, target), init);
      },
    });
    await client.connect(transport);
    try {
      const progress: Progress[] = [];
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["recall", "analyze", "ingest"]);
      const run = await callTool(
        client,
        "analyze",
        { question: "How is the Acme onboarding?", entity_id: tenant.entityId },
        { onprogress: (p) => progress.push(p) },
      );
      expect(run.isError, run.text).toBe(false);
      expect(progress.length).toBeGreaterThan(0);
      const connection = await ok(client, "recall", { mode: "connection", entity_id: tenant.entityId });
      expect(connection).toMatchObject({ status: "connected", client_interface: "mcp" });
      // initialize, notifications/initialized, tools/list, tools/call, tools/call (the GET stream
      // the client may open is refused with 405 by either process).
      expect(new Set(served)).toEqual(new Set(targets));
    } finally {
      await client.close();
    }
  });
});
