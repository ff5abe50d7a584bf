import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { afterFailure, type BreakerState, pauseMs } from "../../src/delivery/webhooks/breaker.js";
import { maxAttempts, retryDelayMs } from "../../src/delivery/webhooks/retry.js";
import { generateSecret, messageIdOf, signatureOf } from "../../src/delivery/webhooks/signing.js";
import { loadConfig } from "../../src/platform/config.js";
import { jobCatalog } from "../../src/platform/queues.js";

const config = loadConfig({ AUTH_JWT_SECRET: "test-secret-for-hs256-tokens-only" });

describe("the retry schedule with the default settings", () => {
  it("is 5 s, 30 s, 2 min, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: ten attempts spanning more than 24 hours", () => {
    const attempts = maxAttempts(config, jobCatalog["webhook.deliver.v1"].options.attempts);
    expect(attempts).toBe(10);
    const delays = Array.from({ length: attempts }, (_, i) => retryDelayMs(config, i + 1));
    const s = 1000;
    expect(delays).toEqual([5 * s, 30 * s, 120 * s, 300 * s, 1800 * s, 7200 * s, 18_000 * s, 36_000 * s, 36_000 * s, -1]);
    const total = delays.filter((d) => d > 0).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(24 * 3600 * s);
  });

  it("ends sooner under WEBHOOK_MAX_ATTEMPTS and scales with WEBHOOK_RETRY_BASE_MS", () => {
    const short = { WEBHOOK_MAX_ATTEMPTS: 3, WEBHOOK_RETRY_BASE_MS: 10 };
    expect([1, 2, 3].map((n) => retryDelayMs(short, n))).toEqual([10, 60, -1]);
  });
});

describe("the circuit breaker with the default settings", () => {
  it("pauses at 5 failures in a row for 1 min, doubling to at most 1 h, and disables at 50", () => {
    const min = 60_000;
    expect([4, 5, 6, 7, 8, 9, 10, 11, 12, 49].map((n) => pauseMs(config, n) / min)).toEqual([0, 1, 2, 4, 8, 16, 32, 60, 60, 60]);
    const at = new Date("2026-11-27T09:00:00Z");
    let state: BreakerState = { state: "enabled", consecutiveFailures: 0, pausedUntil: null };
    const states: string[] = [];
    for (let i = 0; i < 50; i++) {
      state = afterFailure(config, state, at);
      states.push(state.state);
    }
    expect(states.indexOf("paused")).toBe(4);
    expect(states.indexOf("disabled")).toBe(49);
    expect(state).toEqual({ state: "disabled", consecutiveFailures: 50, pausedUntil: null });
  });

  it("never shortens a pause in force, and with 0 neither pauses nor disables", () => {
    const at = new Date("2026-11-27T09:00:00Z");
    const later = new Date(at.getTime() + 3_600_000);
    const paused = afterFailure(config, { state: "paused", consecutiveFailures: 5, pausedUntil: later }, at);
    expect(paused).toEqual({ state: "paused", consecutiveFailures: 6, pausedUntil: later });
    const off = { ...config, WEBHOOK_PAUSE_AFTER_FAILURES: 0, WEBHOOK_DISABLE_AFTER_FAILURES: 0 };
    expect(afterFailure(off, { state: "enabled", consecutiveFailures: 999, pausedUntil: null }, at)).toEqual({
      state: "enabled",
      consecutiveFailures: 1000,
      pausedUntil: null,
    });
  });

  it("refuses settings that disable before pausing, or a longest pause below the first", () => {
    const base = { AUTH_JWT_SECRET: "test-secret-for-hs256-tokens-only" };
    expect(() => loadConfig({ ...base, WEBHOOK_DISABLE_AFTER_FAILURES: "5" })).toThrow(
      /WEBHOOK_DISABLE_AFTER_FAILURES: must be above WEBHOOK_PAUSE_AFTER_FAILURES/,
    );
    expect(() => loadConfig({ ...base, WEBHOOK_PAUSE_MS: "60000", WEBHOOK_PAUSE_MAX_MS: "1000" })).toThrow(
      /WEBHOOK_PAUSE_MAX_MS: must be at least WEBHOOK_PAUSE_MS/,
    );
    expect(loadConfig({ ...base, WEBHOOK_PAUSE_AFTER_FAILURES: "0", WEBHOOK_DISABLE_AFTER_FAILURES: "0" })).toBeDefined();
  });
});

describe("signing", () => {
  it("gives the signature standardwebhooks gives for the same secret, id, time and body", () => {
    const secret = generateSecret();
    const at = new Date("2026-11-23T09:00:00Z");
    const body = JSON.stringify({ type: "analysis.completed", data: { id: "x", note: "ünïcode ✓" } });
    const ours = signatureOf(secret, "msg_abc", Math.floor(at.getTime() / 1000), body);
    expect(ours).toBe(new Webhook(secret).sign("msg_abc", at, body));
  });

  it("derives one message id per (kind, job id, state)", () => {
    const a = messageIdOf({ kind: "analysis", id: "1b4e28ba-2fa1-11d2-883f-0016d3cca427", status: "completed" });
    expect(a).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(messageIdOf({ kind: "analysis", id: "1b4e28ba-2fa1-11d2-883f-0016d3cca427", status: "completed" })).toBe(a);
    expect(messageIdOf({ kind: "analysis", id: "1b4e28ba-2fa1-11d2-883f-0016d3cca427", status: "failed" })).not.toBe(a);
    expect(messageIdOf({ kind: "collection_job", id: "1b4e28ba-2fa1-11d2-883f-0016d3cca427", status: "completed" })).not.toBe(a);
  });
});
