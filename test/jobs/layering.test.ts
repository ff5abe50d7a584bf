import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import "../../src/job-kinds.js";
import { JOB_KINDS } from "../../src/jobs/events.js";
import { jobEndListeners, registeredRecoveries } from "../../src/jobs/registry.js";

/**
 * The shared job lifecycle (`src/jobs`) knows no domain: it imports only itself, the platform and
 * libraries; the kinds register what they add (src/job-kinds.ts).
 */
const JOBS_DIR = join(import.meta.dirname, "../../src/jobs");

describe("src/jobs", () => {
  it("imports no domain module", () => {
    const offending: string[] = [];
    for (const file of readdirSync(JOBS_DIR).filter((f) => f.endsWith(".ts"))) {
      const text = readFileSync(join(JOBS_DIR, file), "utf8");
      for (const [, from] of text.matchAll(/from "([^"]+)"/g)) {
        const local = from?.startsWith(".");
        if (local && !from?.startsWith("./") && !from?.startsWith("../platform/") && !from?.startsWith("../generated/")) {
          offending.push(`${file}: ${from}`);
        }
      }
    }
    expect(offending).toEqual([]);
  });

  it("leaves the announcement of a job's end to the runtime and the lifecycle, never to a kind", () => {
    // Kinds return (or throw) the end they wrote, marked with endedWith; the worker runtime announces it.
    // Cancels go through cancelJob, an operator's other transitions through endJob.
    const root = join(import.meta.dirname, "../..");
    const allowed = (f: string) => f.startsWith("src/jobs/") || f === "workers/runtime.ts";
    const callers = (["src", "workers"] as const)
      .flatMap((dir) => readdirSync(join(root, dir), { recursive: true, encoding: "utf8" }).map((f) => `${dir}/${f}`))
      .filter((f) => f.endsWith(".ts") && !allowed(f))
      .filter((f) => /\bjobEnded\b/.test(readFileSync(join(root, f), "utf8")));
    expect(callers).toEqual([]);
  });

  it("has every kind's recovery and the webhook listener once the kinds are registered", () => {
    expect(registeredRecoveries().map((r) => r.name)).toEqual([
      "staged jobs",
      "collection jobs",
      "analyses",
      "workflow runs",
      "meeting-note syncs",
      "enrichment",
      "evidence capture runs",
      "webhook deliveries",
    ]);
    expect(jobEndListeners()).toHaveLength(1);
    expect(JOB_KINDS.length).toBe(5);
  });
});
