import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import { CORPUS } from "../analysis/corpus.js";
import { createTenant, storeSources, type Tenant, waitFor } from "../analysis/fixtures.js";
import { openStream } from "../analysis/sse-client.js";
import { type Fake, hackernewsFake, hnStories } from "../collection/fakes.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { freePort, until } from "../reliability/support/processes.js";

/**
 * Two web and two worker processes (the Procfile's entries, as real child processes) on one
 * Redis Cluster and one PostgreSQL. An analysis started on web A streams live from web B
 * (the worker processes start only after B is listening, so every event crosses the
 * cluster's sharded pub/sub from a worker to B); a collection job created on web A runs on
 * a worker process and reads as completed on web B; one caller's rate limit is counted
 * across both webs.
 */
const root = path.resolve(import.meta.dirname, "../..");
const LIMIT = 12;
const stories = hnStories(6, "p");

let h: Harness;
let hn: Fake;
let tenant: Tenant;
const children: ChildProcess[] = [];
const output: string[] = [];
const webs: { url: string }[] = [];

function startProcess(entry: string, extra: Record<string, string>): ChildProcess {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "" };
  for (const [name, value] of Object.entries(h.config)) if (value !== undefined) env[name] = String(value);
  Object.assign(env, { LOG_LEVEL: "warn", RATE_LIMIT_PER_MINUTE: String(LIMIT), ...extra });
  const child = spawn(process.execPath, ["--import", "tsx", path.join(root, entry)], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.on("data", (c: Buffer) => output.push(String(c)));
  child.stderr?.on("data", (c: Buffer) => output.push(String(c)));
  children.push(child);
  return child;
}

async function startWeb(): Promise<{ url: string }> {
  const port = await freePort();
  startProcess("src/server.ts", { PORT: String(port), HOST: "127.0.0.1" });
  const url = `http://127.0.0.1:${port}`;
  await until("web process healthy", async () => (await fetch(`${url}/agent/v1/health`).catch(() => undefined))?.status === 200, 60_000);
  return { url };
}

const call = (base: string, route: string, token: string, init: { method?: string; body?: unknown } = {}) =>
  fetch(`${base}${route}`, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });

beforeAll(async () => {
  hn = await hackernewsFake((q) => (q.startsWith("Procs") ? stories : []));
  h = await createHarness({
    HACKERNEWS_API_URL: `${hn.url}/api/v1`,
    COLLECTOR_ALLOW_PRIVATE_URLS: "true",
    COLLECTOR_PAGE_SIZE: "3",
    COLLECTOR_MAX_PAGES: "2",
    COLLECTOR_MAX_COMMENTS: "0",
    COLLECTOR_REQUESTS_PER_SECOND: "1000",
    SSE_HEARTBEAT_MS: "200",
  });
  tenant = await createTenant(h);
  // The corpus is enriched in this process first; the worker processes come later.
  const enrich = h.startWorkers({ "enrichment.content.v1": enrichmentProcessor });
  const ids = await storeSources(h, tenant, CORPUS);
  await waitFor(async () =>
    (await h.deps.db.content.count({ where: { id: { in: ids }, enrichment: { enrichedAt: { not: null } } } })) === ids.length
      ? true
      : undefined,
  );
  await enrich.close();
  webs.push(...(await Promise.all([startWeb(), startWeb()])));
}, 120_000);
afterAll(async () => {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
          setTimeout(() => child.kill("SIGKILL"), 10_000).unref();
        }),
    ),
  );
  await h?.close();
  await hn?.close();
});

describe("two web and two worker processes on a Redis Cluster", () => {
  it("stream an analysis started on web A from web B, live from the workers", async () => {
    const [a, b] = webs as [{ url: string }, { url: string }];
    const started = await openStream(`${a.url}/agent/v1/analysis/run`, {
      method: "POST",
      token: tenant.token,
      body: { question: "What do users think about Acme pricing?", entity_id: tenant.entityId, request_id: randomId("procs-") },
    });
    expect(started.status).toBe(200);
    const analysisId = started.headers.get("x-analysis-id");
    expect(analysisId).toBeTruthy();
    const watched = await openStream(`${b.url}/agent/v1/analysis/${analysisId}/events`, { token: tenant.token });
    // What web B answered and what the processes logged, should it ever refuse (seen once as a 404).
    expect(watched.status, `${JSON.stringify(watched.json)}\n${output.join("").slice(-3000)}`).toBe(200);
    // Nothing can run yet: no worker process exists.
    expect((await h.deps.db.analysis.findUniqueOrThrow({ where: { id: analysisId! } })).status).toBe("queued");

    startProcess("workers/index.ts", {});
    startProcess("workers/index.ts", {});
    await Promise.all([started.closed, watched.closed]);
    expect(watched.events.at(-1)?.event, output.join("").slice(-3000)).toBe("result");
    expect(watched.events.at(-1)?.data).toMatchObject({ status: "completed" });
    // B saw every event A saw, in the same order with the same ids.
    expect(watched.events).toEqual(started.events);
    expect(watched.events.map((e) => e.id)).toEqual(watched.events.map((_, i) => i + 1));
    expect(watched.events.filter((e) => e.event === "progress").length).toBeGreaterThan(0);
  });

  it("run a collection job created on web A on a worker process; web B reads it completed", async () => {
    const [a, b] = webs as [{ url: string }, { url: string }];
    const user = await h.token();
    const entity = (await (await call(a.url, "/api/entities", user, { method: "POST", body: { name: "Procs" } })).json()) as { id: string };
    const created = await call(a.url, "/agent/v1/ingest/collection/jobs", user, {
      method: "POST",
      body: { entity_id: entity.id, objective: "About Procs", platforms: ["hackernews"], collection_only: true },
    });
    expect(created.status).toBe(200);
    const { job_id: jobId } = (await created.json()) as { job_id: string };
    // Waiting reads the row (polling a web process would spend the caller's rate limit).
    await until(
      "the job ended",
      async () => ["completed", "failed"].includes((await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } })).status),
      30_000,
    );
    const status = await call(b.url, `/agent/v1/ingest/collection/jobs/${jobId}`, user);
    expect(await status.json(), output.join("").slice(-3000)).toMatchObject({ status: "completed", counts: { stored: stories.length } });
  });

  it("count one caller's rate limit across both webs", async () => {
    const [a, b] = webs as [{ url: string }, { url: string }];
    // The limit is a fixed one-minute window; an attempt that straddles two windows is repeated.
    for (let attempt = 0; attempt < 3; attempt++) {
      const user = await h.token();
      const window = Math.floor(Date.now() / 60_000);
      const statuses: number[] = [];
      for (let i = 0; i < LIMIT + 2; i++) statuses.push((await call(i % 2 === 0 ? a.url : b.url, "/api/entities", user)).status);
      if (Math.floor(Date.now() / 60_000) !== window) continue;
      expect(statuses).toEqual([...Array(LIMIT).fill(200), 429, 429]);
      return;
    }
    throw new Error("every attempt straddled a minute boundary");
  });
});
