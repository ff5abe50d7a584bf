import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpClient, UpstreamError } from "../../src/intake/collection/collectors/http.js";
import { parseRetryAfterMs as parseRetryAfter } from "../../src/platform/http/retry-after.js";
import { type Fake, type Reply, startFake } from "./fakes.js";

/** The collectors' HTTP client against a local server: retries, rate-limit answers, refusals. */
let fake: Fake;
const counters = new Map<string, number>();
const hit = (path: string) => {
  const n = (counters.get(path) ?? 0) + 1;
  counters.set(path, n);
  return n;
};

beforeAll(async () => {
  fake = await startFake((req, base): Reply => {
    const n = hit(req.path);
    switch (req.path) {
      case "/ok":
        return { status: 200, body: { ok: true } };
      case "/flaky":
        return n < 3 ? { status: 502, body: { error: "bad gateway" } } : { status: 200, body: { ok: n } };
      case "/limited-long":
        return { status: 429, headers: { "retry-after": "120" }, body: { error: "slow down" } };
      case "/github-limit":
        return n === 1
          ? { status: 403, headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(Math.ceil(Date.now() / 1000)) }, body: {} }
          : { status: 200, body: { ok: true } };
      case "/gone":
        return { status: 404, body: { error: "not found" } };
      case "/redirect":
        return { status: 302, headers: { location: `${base}/ok` }, body: "" };
      case "/huge":
        return { status: 200, body: "x".repeat(200_000) };
      case "/not-json":
        return { status: 200, body: "<html>oops</html>" };
      default:
        return { status: 500, body: {} };
    }
  });
});
afterAll(() => fake.close());

const client = (extra: Partial<Parameters<typeof createHttpClient>[0]> = {}) =>
  createHttpClient({
    timeoutMs: 2000,
    retries: 3,
    requestsPerSecond: 1000,
    maxRetryAfterMs: 5000,
    baseDelayMs: 10,
    allowPrivateUrls: true,
    ...extra,
  });

describe("collector HTTP client", () => {
  it("retries transient answers with backoff and returns the eventual success", async () => {
    const http = client();
    const { body } = await http.getJson<{ ok: number }>(`${fake.url}/flaky`);
    expect(body.ok).toBe(3);
    expect(http.requests).toBe(3);
  });

  it("does not retry a permanent refusal", async () => {
    const http = client();
    const err = await http.getJson(`${fake.url}/gone`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ kind: "permanent", status: 404 });
    expect(http.requests).toBe(1);
  });

  it("gives up at once, as transient, when Retry-After asks for longer than it may wait", async () => {
    const http = client();
    const started = Date.now();
    const err = await http.getJson(`${fake.url}/limited-long`).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "transient", status: 429, retryAfterMs: 120_000 });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("treats GitHub's 403 with x-ratelimit-remaining: 0 as a rate limit and waits for the reset", async () => {
    const http = client();
    const { body } = await http.getJson<{ ok: boolean }>(`${fake.url}/github-limit`);
    expect(body.ok).toBe(true);
    expect(http.requests).toBe(2);
  });

  it("follows redirects and refuses a body that is not JSON", async () => {
    expect((await client().getJson<{ ok: boolean }>(`${fake.url}/redirect`)).body.ok).toBe(true);
    await expect(client().getJson(`${fake.url}/not-json`)).rejects.toMatchObject({ kind: "permanent" });
  });

  it("refuses an answer larger than its byte limit", async () => {
    await expect(client({ maxBytes: 100_000 }).getText(`${fake.url}/huge`)).rejects.toMatchObject({
      kind: "permanent",
      message: /larger than 100000 bytes/,
    });
    expect((await client().getText(`${fake.url}/huge`)).body).toHaveLength(200_000);
  });

  it("refuses loopback and private addresses for user-supplied URLs", async () => {
    const http = client({ allowPrivateUrls: false });
    await expect(http.getText(`${fake.url}/ok`)).rejects.toThrow(/not a public address/);
    await expect(http.getText("http://10.1.2.3/")).rejects.toThrow(/not a public address/);
    await expect(http.getText("http://[::1]:80/")).rejects.toThrow(/not a public address/);
    expect(http.requests).toBe(0);
  });

  it("spaces requests to the configured rate", async () => {
    const http = client({ requestsPerSecond: 20 });
    const before = counters.get("/ok") ?? 0;
    const started = Date.now();
    await Promise.all(Array.from({ length: 5 }, () => http.getJson(`${fake.url}/ok`)));
    expect((counters.get("/ok") ?? 0) - before).toBe(5);
    // Five requests at 20/s: the last starts at least 200 ms after the first.
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it("says what happened: unreachable (no such name, refused connection), timed out, rate limited, refused", async () => {
    const http = client({ retries: 1, baseDelayMs: 5, maxRetryAfterMs: 1000, timeoutMs: 300 });
    // A name that does not exist is not retried.
    const before = http.requests;
    await expect(http.getText("http://no-such-host.invalid/")).rejects.toMatchObject({
      problem: "unreachable",
      kind: "permanent",
      message: expect.stringMatching(/^unreachable: the name no-such-host\.invalid could not be resolved \(ENOTFOUND\)/),
    });
    expect(http.requests - before).toBe(1);
    // A closed port: the connection is refused, which may pass, so it is transient.
    const closed = await startFake(() => ({ status: 200, body: {} }));
    const closedUrl = closed.url;
    await closed.close();
    await expect(http.getText(`${closedUrl}/`)).rejects.toMatchObject({
      problem: "unreachable",
      kind: "transient",
      message: expect.stringMatching(/refused the connection \(ECONNREFUSED\)/),
    });
    await expect(http.getJson(`${fake.url}/limited-long`)).rejects.toMatchObject({ problem: "rate_limited", status: 429 });
    await expect(http.getJson(`${fake.url}/gone`)).rejects.toMatchObject({ problem: "refused", status: 404 });
    await expect(http.getJson(`${fake.url}/always-500`)).rejects.toMatchObject({ problem: "unavailable", status: 500 });
  });

  it("reads Retry-After in seconds and as an HTTP date", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    expect(parseRetryAfter(new Date(Date.now() + 10_000).toUTCString())).toBeGreaterThan(8000);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
