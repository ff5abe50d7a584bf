import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { type AppDeps, closeDeps, createDeps } from "../../src/platform/deps.js";
import { scanKeys, whenReady } from "../../src/platform/redis.js";
import { createKeyFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { expectErrorBody, type Listening, listen, type RawResponse, rawRequest } from "./support/http.js";

/**
 * Rate limiting per API key and per user, counted in Redis: two web processes (two
 * apps, each with its own Redis and database connections, as two dynos would have)
 * share one budget. Past it: 429 `rate_limited` with a `Retry-After` in seconds.
 */
const LIMIT = 6;

let h: Harness;
let second: AppDeps;
let webA: Listening;
let webB: Listening;

beforeAll(async () => {
  h = await createHarness({ RATE_LIMIT_PER_MINUTE: String(LIMIT) });
  second = createDeps(h.config, "web-2");
  await whenReady(second.redis, 5000);
  webA = await listen(h.app);
  webB = await listen(createApp(second));
});
afterAll(async () => {
  await webB?.close();
  await webA?.close();
  await closeDeps(second);
  await h?.close();
});

const windowOf = () => Math.floor(Date.now() / 60_000);

/**
 * Runs `attempt` inside one fixed one-minute window: an attempt that straddles a window
 * boundary (the counter resets there) is repeated once with fresh credentials.
 */
async function withinOneWindow(attempt: () => Promise<void>): Promise<void> {
  for (let tries = 0; ; tries++) {
    const start = windowOf();
    try {
      await attempt();
      if (windowOf() === start) return;
    } catch (err) {
      if (windowOf() === start || tries > 0) throw err;
    }
    if (tries > 0) throw new Error("two attempts straddled a rate-limit window");
  }
}

const get = (web: Listening, path: string, headers: Record<string, string>) => rawRequest(web.port, { method: "GET", path, headers });

function expectLimited(res: RawResponse) {
  expect(res.status, res.text).toBe(429);
  expectErrorBody(res, "rate limited");
  expect(JSON.parse(res.text).code).toBe("rate_limited");
  const retryAfter = Number(res.headers["retry-after"]);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

describe("rate limits shared by two web processes", () => {
  it("limits an API key across both processes, and only that key", async () => {
    await withinOneWindow(async () => {
      const token = await h.token();
      const key = await createKeyFor(h, token, ["*"]);
      const other = await createKeyFor(h, token, ["*"]);
      const headers = { "X-API-Key": key.raw_key };
      for (let i = 0; i < LIMIT; i++) {
        const res = await get(i % 2 === 0 ? webA : webB, "/api/entities", headers);
        expect(res.status, `request ${i + 1}: ${res.text}`).toBe(200);
      }
      expectLimited(await get(webA, "/api/entities", headers));
      expectLimited(await get(webB, "/api/entities", headers));
      // Another key of the same user, and the user's bearer, have budgets of their own.
      expect((await get(webB, "/api/entities", { "X-API-Key": other.raw_key })).status).toBe(200);
      expect((await get(webA, "/api/entities", { Authorization: `Bearer ${token}` })).status).toBe(200);
      // A limited request is still recorded in the key's usage.
      const usage = await h.deps.db.apiKeyUsage.findMany({ where: { keyId: key.key.id }, orderBy: { id: "asc" } });
      expect(usage.map((u) => u.statusCode)).toEqual([...Array(LIMIT).fill(200), 429, 429]);
    });
  });

  it("limits a user's bearer across both processes, and only that user", async () => {
    await withinOneWindow(async () => {
      const token = await h.token();
      const stranger = await h.token();
      const headers = { Authorization: `Bearer ${token}` };
      for (let i = 0; i < LIMIT; i++) {
        expect((await get(i % 2 === 0 ? webB : webA, "/api/user/keys", headers)).status).toBe(200);
      }
      expectLimited(await get(webA, "/api/user/keys", headers));
      expectLimited(await get(webB, "/api/entities", headers));
      expect((await get(webA, "/api/user/keys", { Authorization: `Bearer ${stranger}` })).status).toBe(200);
    });
  });

  it("counts refused and invalid requests too, but never public or unauthenticated ones", async () => {
    await withinOneWindow(async () => {
      const token = await h.token();
      const headers = { Authorization: `Bearer ${token}` };
      for (let i = 0; i < LIMIT; i++) {
        // Invalid query: still a request made with this credential.
        expect((await get(webA, "/api/entities?kind=nope", headers)).status).toBe(422);
      }
      expectLimited(await get(webB, "/api/entities", headers));
      for (let i = 0; i < LIMIT + 2; i++) {
        expect((await get(webA, "/agent/v1/health", {})).status).toBe(200);
        expect((await get(webB, "/api/entities", {})).status).toBe(401);
      }
    });
  });

  it("keeps the counters in Redis under the deployment's prefix, expiring", async () => {
    const token = await h.token();
    expect((await get(webA, "/api/entities", { Authorization: `Bearer ${token}` })).status).toBe(200);
    const keys = await scanKeys(h.deps.redis, `${h.config.REDIS_PREFIX}:ratelimit:*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const ttl = await h.deps.redis.ttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(120);
    }
  });
});
