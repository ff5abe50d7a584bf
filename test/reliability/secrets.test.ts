import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import supertest from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import type { AppDeps } from "../../src/platform/deps.js";
import { createLogger } from "../../src/platform/logger.js";
import { allRoutes } from "../../src/routes.js";
import { processors } from "../../workers/processors.js";
import { startWorkers, type WorkerHandles } from "../../workers/runtime.js";
import { createHarness, type Harness, TEST_JWT_SECRET } from "../helpers/harness.js";
import { fillPath, pathParamNames, sampleValid } from "./support/arbitraries.js";
import { type Listening, listen, rawRequest } from "./support/http.js";
import { buildWorld, knownIds, type World } from "./support/world.js";

/**
 * No secret leaves the service: not the providers' api keys (embeddings, chat model,
 * GitHub, a meeting-notes key sent in a request), not the JWT secret, the secrets key or
 * the operator password, not raw API keys or their stored hashes, not bearer tokens. The
 * real app and every worker run with logs at `trace` captured in memory, against local
 * upstreams that refuse the credentials; then every log line, every answer, every
 * exported row and every value in Redis is searched for each secret, in clear and in
 * base64, base64url, hex and URL encoding.
 */
const canary = (name: string) => `${name}_CANARY_${randomBytes(16).toString("hex")}`;
const SECRETS = {
  EMBEDDINGS_API_KEY: canary("sk_embed"),
  LLM_API_KEY: canary("sk_llm"),
  GITHUB_TOKEN: canary("ghp"),
  SECRETS_KEY: canary("box"),
  ADMIN_PASSWORD: canary("admin"),
  NOTES_API_KEY: canary("grn"),
};

interface Upstream {
  url: string;
  seen: IncomingHttpHeaders[];
  server: Server;
}

/** One local server standing in for every provider, refusing or failing like each does. */
async function startUpstream(): Promise<Upstream> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    const url = new URL(req.url ?? "/", "http://x");
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    req.resume();
    req.on("end", () => {
      if (url.pathname === "/v1/embeddings")
        return json(401, { error: { message: "Incorrect API key provided.", type: "invalid_request_error", code: "invalid_api_key" } });
      if (url.pathname === "/v1/chat/completions")
        return json(500, { error: { message: "The server had an error while processing your request." } });
      if (url.pathname.startsWith("/search/"))
        return json(401, { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" });
      if (url.pathname === "/api/v1/search") return json(200, { hits: [], nbHits: 0, page: 0, nbPages: 0, hitsPerPage: 20 });
      if (url.pathname.startsWith("/v1/notes")) return json(401, { message: "Invalid API key" });
      return json(404, { message: "Not Found" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

let upstream: Upstream;
let h: Harness;
let deps: AppDeps;
let web: Listening;
let workers: WorkerHandles;
let world: World;
const logs: string[] = [];
/** Every answer the service gave, except the one creation answer that hands a raw key over. */
const answers: string[] = [];

beforeAll(async () => {
  upstream = await startUpstream();
  h = await createHarness({
    ...SECRETS,
    EMBEDDINGS_URL: `${upstream.url}/v1`,
    LLM_BASE_URL: `${upstream.url}/v1`,
    GITHUB_API_URL: upstream.url,
    HACKERNEWS_API_URL: `${upstream.url}/api/v1`,
    REDDIT_API_URL: upstream.url,
    MEETINGNOTES_API_URL: upstream.url,
    COLLECTOR_RETRIES: "0",
    COLLECTOR_ALLOW_PRIVATE_URLS: "true",
    NOTES_SYNC_WAIT_MS: "5000",
  });
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  deps = { ...h.deps, logger: createLogger("trace", "secrets-test", sink) };
  const app = createApp(deps);
  web = await listen(app);
  workers = startWorkers(deps, processors, { concurrency: 4 });
  world = await buildWorld({ ...h, deps, app, http: supertest(app) });
});
afterAll(async () => {
  await workers?.close();
  await web?.close();
  await h?.close();
  await new Promise<void>((resolve) => upstream?.server.close(() => resolve()));
});

function variants(secret: string): string[] {
  const b = Buffer.from(secret);
  return [secret, b.toString("base64"), b.toString("base64url"), b.toString("hex"), encodeURIComponent(secret)];
}

async function needles(): Promise<{ name: string; value: string }[]> {
  const keys = await h.deps.db.apiKey.findMany({ select: { name: true, keyHash: true } });
  const list = [
    ...Object.entries(SECRETS).map(([name, value]) => ({ name, value })),
    { name: "AUTH_JWT_SECRET", value: TEST_JWT_SECRET },
    ...Object.entries(world.keys).map(([name, key]) => ({ name: `raw ${name} key`, value: key.raw })),
    ...keys.map((k) => ({ name: `hash of key ${k.name}`, value: k.keyHash })),
  ];
  return list.flatMap(({ name, value }) => variants(value).map((v) => ({ name, value: v })));
}

async function get(path: string, headers: Record<string, string>) {
  const res = await rawRequest(web.port, { method: "GET", path, headers });
  answers.push(res.text, JSON.stringify(res.headers));
  return res;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("secrets stay secret", () => {
  it("exercises every route and every provider with the secrets in play", async () => {
    const bearer = { Authorization: `Bearer ${world.token}` };
    // Every route, valid requests with each credential that may call it, and refused ones.
    for (const route of allRoutes(h.deps)) {
      const params = Object.fromEntries(pathParamNames(route.path).map((n) => [n, world.ids[n]?.[0] ?? "entities"]));
      const body = route.body ? sampleValid<Record<string, unknown>>(route.body, knownIds(world), 3) : undefined;
      for (const headers of [
        bearer,
        { "X-API-Key": world.keys.all.raw },
        { "X-API-Key": world.keys.revoked.raw },
        { "X-API-Key": world.keys.export.raw },
      ]) {
        if (route.method === "delete") continue;
        const res = await rawRequest(web.port, {
          method: route.method.toUpperCase(),
          path: fillPath(route.path, params),
          headers: { ...headers, "content-type": "application/json", "idempotency-key": `secrets-${randomUUID()}` },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        if (!(route.path === "/api/user/keys" && res.status === 201)) answers.push(res.text, JSON.stringify(res.headers));
      }
    }

    // The embeddings provider refuses our key: a 502, naming no key.
    const embed = await rawRequest(web.port, {
      method: "POST",
      path: "/agent/v1/content/embed",
      headers: { ...bearer, "content-type": "application/json" },
      body: JSON.stringify({ text: "pricing is unclear" }),
    });
    answers.push(embed.text);
    expect([502, 503]).toContain(embed.status);

    // A meeting-notes import with a key the provider refuses.
    const notes = await rawRequest(web.port, {
      method: "POST",
      path: "/api/meetingnotes/sync",
      headers: { ...bearer, "content-type": "application/json" },
      body: JSON.stringify({ api_key: SECRETS.NOTES_API_KEY, entity_id: world.entityId, request_id: `secrets-${randomUUID()}` }),
    });
    answers.push(notes.text);
    expect(notes.status).toBeGreaterThanOrEqual(200);

    // A collection job on GitHub (token refused) and Hacker News, continuing into an analysis.
    const entity = await supertest(web.server)
      .post("/api/entities")
      .set(bearer)
      .send({ name: "Leaky Corp", keywords: ["leaky"], platforms: ["github", "hackernews"] });
    expect(entity.status).toBe(201);
    const job = await supertest(web.server)
      .post("/agent/v1/ingest/collection/jobs")
      .set(bearer)
      .send({
        entity_id: entity.body.id,
        objective: "What do developers say about Leaky Corp?",
        idempotency_key: `secrets-${randomUUID()}`,
      });
    expect(job.status).toBe(200);
    answers.push(JSON.stringify(job.body));
    const finished = await until("the collection job", async () => {
      const res = await get(`/agent/v1/ingest/collection/jobs/${job.body.job_id}`, bearer);
      const status = JSON.parse(res.text).status as string;
      return ["completed", "failed"].includes(status) ? JSON.parse(res.text) : undefined;
    });
    expect(JSON.stringify(finished)).toContain("github");

    // An analysis streamed to the end (the chat model fails; the answer is extractive).
    const stream = await fetch(`${web.url}/agent/v1/analysis/run`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json" },
      body: JSON.stringify({ question: "What is confusing about pricing?", entity_id: world.entityId }),
    });
    expect(stream.status).toBe(200);
    answers.push(await stream.text());

    // The upstreams did receive the secrets: the flows above really used them.
    const auths = upstream.seen.map((s) => String(s.authorization ?? ""));
    expect(auths).toContain(`Bearer ${SECRETS.EMBEDDINGS_API_KEY}`);
    expect(auths).toContain(`Bearer ${SECRETS.GITHUB_TOKEN}`);
    expect(auths).toContain(`Bearer ${SECRETS.NOTES_API_KEY}`);
  }, 60_000);

  it("writes none of them to the logs, even at trace level", async () => {
    expect(logs.length).toBeGreaterThan(50);
    expect(logs.some((l) => l.includes('"level":50') || l.includes('"level":40'))).toBe(true);
    const all = logs.join("");
    for (const { name, value } of await needles()) expect(all.includes(value), `${name} appears in the logs`).toBe(false);
    for (const token of [world.token]) expect(all.includes(token), "a bearer token appears in the logs").toBe(false);
  });

  it("answers with none of them, in bodies or headers", async () => {
    expect(answers.length).toBeGreaterThan(100);
    const all = answers.join("\n");
    for (const { name, value } of await needles()) expect(all.includes(value), `${name} appears in an answer`).toBe(false);
  });

  it("exports none of them, from any table or the completeness audit", async () => {
    const texts: string[] = [];
    for (const table of ["entities", "content_store", "opinion_units", "entity_insights", "insight_evidence", "pages", "knowledge"]) {
      const res = await get(`/agent/v1/export/table/${table}?limit=5000`, { "X-API-Key": world.keys.all.raw });
      expect(res.status, res.text).toBe(200);
      texts.push(res.text);
    }
    texts.push((await get("/agent/v1/export/completeness", { Authorization: `Bearer ${world.token}` })).text);
    const all = texts.join("\n");
    for (const { name, value } of await needles()) expect(all.includes(value), `${name} appears in an export`).toBe(false);
  });

  it("leaves none of them in Redis (queued jobs, events, counters)", async () => {
    const redis = h.deps.redis;
    const values: string[] = [];
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${h.config.REDIS_PREFIX}:*`, "COUNT", 1000);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        if (type === "string") values.push(String(await redis.get(key)));
        else if (type === "hash") values.push(JSON.stringify(await redis.hgetall(key)));
        else if (type === "list") values.push(JSON.stringify(await redis.lrange(key, 0, -1)));
        else if (type === "set") values.push(JSON.stringify(await redis.smembers(key)));
        else if (type === "zset") values.push(JSON.stringify(await redis.zrange(key, "0", "-1")));
        else if (type === "stream") values.push(JSON.stringify(await redis.xrange(key, "-", "+")));
      }
    } while (cursor !== "0");
    expect(values.length).toBeGreaterThan(5);
    const all = values.join("\n");
    for (const { name, value } of await needles()) expect(all.includes(value), `${name} appears in Redis`).toBe(false);
  });
});
