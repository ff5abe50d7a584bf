import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STYLESHEET_PATH } from "../../src/delivery/share/pages/index.js";
import { loadConfig } from "../../src/platform/config.js";
import { projectRoot } from "../../src/platform/paths.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * Share pages answer without signing in, so each client address has its own budget per minute
 * (SHARE_PAGES_PER_MINUTE, counted in Redis): pages and event streams count, assets do not. Over
 * it, a 429 page with Retry-After, with the headers of every share page.
 */
const LIMIT = 3;
let h: Harness;

beforeAll(async () => {
  // Behind a trusted proxy the client address is the forwarded one, so each round is a client of its own.
  h = await createHarness({ SHARE_PAGES_PER_MINUTE: String(LIMIT), TRUST_PROXY: "true" });
});
afterAll(() => h?.close());

const token = () => "x".repeat(40) + Math.random().toString(36).slice(2, 5);
const minute = () => Math.floor(Date.now() / 60_000);

describe("share pages per client", () => {
  it("answer 429 with Retry-After once the address opened SHARE_PAGES_PER_MINUTE pages this minute", async () => {
    // The counter is per minute: a run that straddles a minute's end starts again in the next one, as another
    // client (the requests of the first round after the minute's end were counted in the new minute).
    for (let round = 0; round < 2; round++) {
      const client = `203.0.113.${round + 1}`;
      const get = (path: string) => h.http.get(path).set("X-Forwarded-For", client);
      const startedIn = minute();
      const statuses: number[] = [];
      for (let i = 0; i < LIMIT - 1; i++) statuses.push((await get(`/share/${token()}`)).status);
      statuses.push((await get(`/share/${token()}/events`)).status);
      for (let i = 0; i < 5; i++) expect((await get(STYLESHEET_PATH)).status).toBe(200);
      const over = await get(`/share/${token()}`);
      if (minute() !== startedIn) continue;
      expect(statuses).toEqual([404, 404, 404]);
      expect(over.status).toBe(429);
      expect(Number(over.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(Number(over.headers["retry-after"])).toBeLessThanOrEqual(60);
      expect(over.headers["content-type"]).toMatch(/^text\/html/);
      expect(over.headers["content-security-policy"]).toMatch(/default-src 'none'/);
      expect(over.headers["cache-control"]).toBe("no-store");
      expect(over.text).toContain("Too many requests");
      expect((await get(`/share/${token()}/events`)).status).toBe(429);
      return;
    }
    throw new Error("two minute boundaries in two rounds");
  });
});

describe("the documented rule", () => {
  it("says one thing about share pages' rate limit in docs/api.md: the per-address budget, with its default", () => {
    const api = readFileSync(path.join(projectRoot(), "docs", "api.md"), "utf8");
    const start = api.indexOf("## Share links and shared pages");
    const section = api.slice(start, api.indexOf("\n## ", start + 1));
    expect(start).toBeGreaterThan(0);
    const { SHARE_PAGES_PER_MINUTE: fallback } = loadConfig({
      DATABASE_URL: h.config.DATABASE_URL,
      REDIS_URL: h.config.REDIS_URL,
      AUTH_JWT_SECRET: "documented-defaults",
    });
    expect(section).toContain(`\`SHARE_PAGES_PER_MINUTE\` of them a minute (default ${fallback}`);
    // Nothing in the section says the pages go without a limit.
    expect(section.replace(/\s+/g, " ")).not.toMatch(/not rate[- ]limited|no rate limit|unlimited/i);
  });
});
