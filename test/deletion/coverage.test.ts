import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteOriginals } from "../../src/governance/deletion/cascade.js";
import { runRetentionPass } from "../../src/governance/deletion/retention.js";
import { collectionProcessor } from "../../src/intake/collection/runner.js";
import type { RemovedAfter } from "../../src/intake/coverage/schemas.js";
import { type Fake, hackernewsFake, hnStories } from "../collection/fakes.js";
import { type JobStatus, pollJob } from "../collection/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { auth, createTeam, type Team } from "./support.js";

/**
 * Coverage records say when rows their run stored were removed afterwards: a collection job stores
 * originals (each naming the job as its run) and records coverage per platform; deleting one of them,
 * erasing an author and a retention pass each add to that record's `removed_after`, by reason, in the
 * deleting transaction, and the job's poll, the coverage route and the completeness audit show it.
 */
const NONE = { rows: 0, deleted: 0, author_erased: 0, retention: 0, last_removed_at: null };

let h: Harness;
let hn: Fake;
let team: Team;

beforeAll(async () => {
  // Four stories; the first and the third have a comment and a reply (8 rows in all).
  const stories = hnStories(4, "cov");
  hn = await hackernewsFake((q) => (q.includes("Covco") ? stories : []));
  h = await createHarness({
    HACKERNEWS_API_URL: `${hn.url}/api/v1`,
    COLLECTOR_PAGE_SIZE: "10",
    COLLECTOR_REQUESTS_PER_SECOND: "1000",
    COLLECTOR_ALLOW_PRIVATE_URLS: "true",
    RETENTION_BATCH_SIZE: "2",
  });
  h.startWorkers({ "collection.run.v1": collectionProcessor() });
  team = await createTeam(h, "Covco");
}, 60_000);
afterAll(async () => {
  await h?.close();
  await hn?.close();
});

type Polled = JobStatus & {
  counts: JobStatus["counts"] & { removed: number };
  progress: Record<string, JobStatus["progress"][string] & { removed_after: RemovedAfter | null }>;
};
const poll = async (jobId: string) => (await pollJob(h, team.token, jobId)) as Polled;

async function record(runId: string, collector: string) {
  return h.deps.db.coverageRecord.findUniqueOrThrow({ where: { entityId_runId_collector: { entityId: team.entityId, runId, collector } } });
}

async function hackernewsAudit() {
  const res = await h.http.get(`/agent/v1/export/completeness?entity_id=${team.entityId}&platform=hackernews`).set(auth(team.token));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.platforms[0] as { rows: number; deleted: number; coverage_run_id: string; coverage_removed_after: unknown };
}

describe("removed_after on a collection job's coverage record", () => {
  let jobId: string;
  let ids: Map<string, string>;

  it("starts at zero when the job settles", async () => {
    const created = await h.http
      .post("/agent/v1/ingest/collection/jobs")
      .set(auth(team.token))
      .send({
        entity_id: team.entityId,
        objective: "What do people say about Covco?",
        platforms: ["hackernews"],
        collection_only: true,
      });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    jobId = created.body.job_id;
    const done = await poll(jobId);
    expect(done).toMatchObject({ status: "completed", counts: { stored: 8, inserted: 8, removed: 0 } });
    expect(done.progress.hackernews).toMatchObject({ coverage_state: "exhaustive", stored: 8, removed_after: NONE });

    const rows = await h.deps.db.content.findMany({
      where: { entityId: team.entityId },
      select: { id: true, externalId: true, collectionRunId: true },
    });
    expect(rows).toHaveLength(8);
    expect(rows.every((r) => r.collectionRunId === jobId)).toBe(true);
    ids = new Map(rows.map((r) => [r.externalId ?? "", r.id]));
    expect(await hackernewsAudit()).toMatchObject({ rows: 8, deleted: 0, coverage_run_id: jobId, coverage_removed_after: NONE });
  });

  it("counts an original deleted with its comments as deleted", async () => {
    const res = await h.http.delete(`/agent/v1/content/${ids.get("cov1000")}`).set(auth(team.token));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.removed).toMatchObject({ rows: 3, originals: 1, comments: 2, coverage_records_updated: 1 });
    const after = { rows: 3, deleted: 3, author_erased: 0, retention: 0, last_removed_at: res.body.deleted_at };

    const rec = await record(jobId, "hackernews");
    expect(rec).toMatchObject({ removedDeleted: 3, removedAuthorErased: 0, removedRetention: 0 });
    expect(rec.lastRemovedAt?.toISOString()).toBe(res.body.deleted_at);
    // What the collector reported stays as it reported it.
    expect(rec.totals).toMatchObject({ stored: 8, inserted: 8 });

    const status = await poll(jobId);
    expect(status.progress.hackernews?.removed_after).toEqual(after);
    expect(status.counts).toMatchObject({ stored: 8, removed: 3 });
    expect(await hackernewsAudit()).toMatchObject({ rows: 5, deleted: 3, coverage_removed_after: after });
  });

  it("counts an erased author's originals as author_erased", async () => {
    const res = await h.http
      .post(`/api/workspaces/${team.workspaceId}/erasures`)
      .set(auth(team.token))
      .send({ platform: "hackernews", author: "hnuser1" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: "completed", progress: { rows_deleted: 1 } });
    const rec = await record(jobId, "hackernews");
    expect(rec).toMatchObject({ removedDeleted: 3, removedAuthorErased: 1, removedRetention: 0 });
    const tombstone = await h.deps.db.contentDeletion.findUniqueOrThrow({ where: { contentId: ids.get("cov1001") ?? "" } });
    expect(rec.lastRemovedAt).toEqual(tombstone.deletedAt);

    const status = await poll(jobId);
    expect(status.progress.hackernews?.removed_after).toMatchObject({
      rows: 4,
      deleted: 3,
      author_erased: 1,
      retention: 0,
    });
  });

  it("counts what a retention pass removed as retention", async () => {
    await h.http.patch(`/api/workspaces/${team.workspaceId}`).set(auth(team.token)).send({ retention_days: 30 }).expect(200);
    // The third story with its comment and reply, stored 31 days ago; the fourth stays.
    const old = ["cov1002", "5020", "5021"].map((x) => ids.get(x) ?? "");
    await h.deps.db.$executeRaw`UPDATE content_store SET created_at = now() - interval '31 days' WHERE id = ANY(${old}::uuid[])`;
    expect(await runRetentionPass(h.deps, h.config.RETENTION_BATCH_SIZE)).toEqual({ workspaces: 1, removed: 3 });

    const rec = await record(jobId, "hackernews");
    expect(rec).toMatchObject({ removedDeleted: 3, removedAuthorErased: 1, removedRetention: 3 });
    const audited = await hackernewsAudit();
    expect(audited).toMatchObject({
      rows: 1,
      deleted: 7,
      coverage_removed_after: { rows: 7, deleted: 3, author_erased: 1, retention: 3, last_removed_at: rec.lastRemovedAt?.toISOString() },
    });
    const status = await poll(jobId);
    expect(status.counts).toMatchObject({ stored: 8, removed: 7 });
    // The audit entry of the pass counts the record updates with the rest of the cascade's counts.
    const entries = (await h.http.get(`/api/workspaces/${team.workspaceId}/audit`).set(auth(team.token))).body.entries;
    const pass = entries.find((e: { action: string }) => e.action === "content.retention_removed");
    expect(pass.detail).toMatchObject({ rows: 3, coverage_records_updated: expect.any(Number) });
    await h.http.patch(`/api/workspaces/${team.workspaceId}`).set(auth(team.token)).send({ retention_days: null }).expect(200);
  });
});

describe("removed_after on an agent's coverage record", () => {
  const coverage = (body: Record<string, unknown>) =>
    h.http
      .post("/agent/v1/ingest/coverage")
      .set(auth(team.token))
      .send({ entity_id: team.entityId, coverage_state: "exhaustive", ...body });
  const ingestRun = async (runId: string | null, sources: Record<string, unknown>[]) => {
    const res = await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(team.token))
      .send({ entity_id: team.entityId, collection_run_id: runId, sources });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.content_ids as string[];
  };
  const del = async (id: string) => {
    const res = await h.http.delete(`/agent/v1/content/${id}`).set(auth(team.token));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { deleted_at: string; removed: { coverage_records_updated: number } };
  };

  it("ties rows to the record of their run and platform, keeps the tally when the run is posted again", async () => {
    const [first] = await ingestRun("agent-run-1", [
      { platform: "reddit", content: "Covco's onboarding took an afternoon." },
      { platform: "reddit", content: "Covco's export is reliable." },
    ]);
    const posted = await coverage({ run_id: "agent-run-1", collector: "reddit", totals: { stored: 2 } });
    expect(posted.body.removed_after).toEqual(NONE);
    // Another run on the same platform is not told.
    await coverage({ run_id: "agent-run-0", collector: "reddit" }).expect(200);

    const gone = await del(first ?? "");
    expect(gone.removed.coverage_records_updated).toBe(1);
    const again = await coverage({ run_id: "agent-run-1", collector: "reddit", coverage_state: "sampled", totals: { stored: 2 } });
    expect(again.status).toBe(200);
    expect(again.body.removed_after).toEqual({ rows: 1, deleted: 1, author_erased: 0, retention: 0, last_removed_at: gone.deleted_at });
    expect(await record("agent-run-0", "reddit")).toMatchObject({ removedDeleted: 0, lastRemovedAt: null });

    // The latest reddit record is agent-run-1's (posted last): the audit shows its tally.
    const audit = await h.http.get(`/agent/v1/export/completeness?entity_id=${team.entityId}&platform=reddit`).set(auth(team.token));
    expect(audit.body.platforms[0]).toMatchObject({ coverage_run_id: "agent-run-1", coverage_removed_after: { rows: 1, deleted: 1 } });
  });

  it("falls back to the run's `unknown` collector record, and leaves rows without a run out", async () => {
    const [gh, web] = await ingestRun("agent-run-2", [
      { platform: "github", content: "Covco's API client is missing retries." },
      { platform: "web", content: "Covco's pricing page lists three plans." },
    ]);
    await coverage({ run_id: "agent-run-2" }).expect(200);
    // One batch of the cascade: two rows on two platforms, one record (the run recorded no platform).
    const erased = await h.deps.db.$transaction((tx) =>
      deleteOriginals(tx, {
        workspaceId: team.workspaceId,
        rootIds: [gh ?? "", web ?? ""],
        reason: "deleted",
        actorId: null,
        erasureId: null,
      }),
    );
    expect(erased.counts).toMatchObject({ rows: 2, coverage_records_updated: 1 });
    expect(await record("agent-run-2", "unknown")).toMatchObject({ removedDeleted: 2 });

    // A row stored without a run id is in no record.
    const [loose] = await ingestRun(null, [{ platform: "reddit", content: "Covco, no run named." }]);
    expect((await del(loose ?? "")).removed.coverage_records_updated).toBe(0);
  });
});
