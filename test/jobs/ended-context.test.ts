import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endedContextSql } from "../../src/jobs/lifecycle.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * The one statement a job's end runs (owner, workspace, listening webhooks, waiting workflow runs):
 * its look-up of the waiting runs is an index probe over live runs, not a scan of every run ever made.
 */
let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

type Plan = { "Node Type": string; "Index Name"?: string; Plans?: Plan[] };
const nodes = (plan: Plan): Plan[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

describe("a job's end", () => {
  it.each([
    ["collection_job", "workflow_runs_live_collection_job_idx"],
    ["analysis", "workflow_runs_live_analysis_idx"],
  ] as const)("finds the workflow runs waiting on a %s through %s", async (kind, index) => {
    // A sequential scan is always possible; turned off, the planner must find the index usable.
    const [explained] = await h.deps.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
      return tx.$queryRawUnsafe<{ "QUERY PLAN": { Plan: Plan }[] }[]>(`EXPLAIN (FORMAT JSON) ${endedContextSql(kind)}`, [randomUUID()]);
    });
    const runScans = nodes(explained?.["QUERY PLAN"][0]?.Plan as Plan).filter((n) => n["Index Name"]?.startsWith("workflow_runs"));
    expect(runScans.map((n) => n["Index Name"])).toEqual([index]);
  });
});
