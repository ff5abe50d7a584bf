import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { projectRoot } from "../../src/platform/paths.js";
import { ensureBuilt, procfileArgv } from "../helpers/compiled.js";
import { randomId } from "../helpers/harness.js";

/**
 * The web process as the Procfile starts it (its compiled entry, with the Procfile's flags): it
 * generates nothing in place of an unset setting, and says at start-up, in one warning line, which
 * settings are unset and which feature each one turns off.
 */
interface LogLine {
  level: number;
  msg: string;
  unset?: string[];
}

const running: ChildProcess[] = [];
beforeAll(ensureBuilt);
afterEach(async () => {
  for (const child of running.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
});

/** Starts the web process with exactly `env` (plus PATH) and answers its log lines up to "web listening". */
async function startWeb(env: Record<string, string>): Promise<LogLine[]> {
  const root = projectRoot();
  const [node, ...args] = procfileArgv("web");
  const child = spawn(node, args, {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      HOST: "127.0.0.1",
      PORT: "0",
      DATABASE_URL: inject("databaseUrl"),
      REDIS_URL: inject("redisUrl"),
      REDIS_PREFIX: randomId("t"),
      AUTH_JWT_SECRET: "startup-warning-test-secret",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(child);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines: LogLine[] = [];
  const reader = createInterface({ input: child.stdout! });
  const listening = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`web did not start: ${stderr}`)), 20_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`web exited (${code}): ${stderr}`));
    });
    reader.on("line", (line) => {
      const parsed = JSON.parse(line) as LogLine;
      lines.push(parsed);
      if (parsed.msg === "web listening") {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  await listening;
  return lines;
}

describe("web process start-up", () => {
  it("warns once, naming each unset setting and the feature it turns off", async () => {
    const lines = await startWeb({});
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    const [warning] = warnings;
    expect(warning?.unset).toEqual(["SECRETS_KEY", "ADMIN_USER", "ADMIN_PASSWORD"]);
    expect(warning?.msg).toMatch(/SECRETS_KEY: meeting-note import \(POST \/api\/meetingnotes\/sync answers 503/);
    expect(warning?.msg).toMatch(/ADMIN_USER and ADMIN_PASSWORD: the operator pages \(\/admin\/queues and \/metrics/);
  });

  it("names only what is missing, and in production also PUBLIC_BASE_URL", async () => {
    const lines = await startWeb({ NODE_ENV: "production", ADMIN_USER: "operator", ADMIN_PASSWORD: "operator-password" });
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings.map((w) => w.unset)).toEqual([["SECRETS_KEY", "PUBLIC_BASE_URL"]]);
  });

  it("says nothing when every such setting is set", async () => {
    const lines = await startWeb({
      SECRETS_KEY: "startup-warning-secrets-key",
      ADMIN_USER: "operator",
      ADMIN_PASSWORD: "operator-password",
    });
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
  });
});
