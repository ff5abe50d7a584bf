import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ensureRetentionScheduler, RETENTION_SCHEDULER_ID, startRetentionScheduler } from "../../src/governance/deletion/scheduler.js";
import { retentionTickProcessor } from "../../workers/retention.js";
import { until } from "../collection/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { auth, createTeam, ingest, type Team } from "./support.js";

/**
 * The retention pass as the worker process runs it: the `retention-pass` job scheduler (upserted by
 * `startRetentionScheduler`, here every 500 ms, on this file's Redis prefix) produces `retention.tick.v1`
 * jobs on the `enrichment` queue, a real worker runs them, and the pass deletes what is older than the
 * workspace's `retention_days`. Also: RETENTION_INTERVAL_MS=0 removes the scheduler, a restart with the
 * same interval does not upsert it again, and a pass that stopped midway is continued by the next tick.
 */
const EVERY_MS = 500;

let h: Harness;
let team: Team;

beforeAll(async () => {
  // One original per transaction and no rest between them: a pass is several batches, quickly.
  h = await createHarness({ RETENTION_BATCH_SIZE: "1", DELETION_PAUSE_FACTOR: "0" });
  team = await createTeam(h);
  // One tick at a time: two passes over one workspace at once each reset its `removed_last_pass` when
  // they start (docs/operations.md), which would make the counts below depend on timing.
  h.startWorkers({ "retention.tick.v1": retentionTickProcessor }, 1);
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const queue = () => h.deps.queues.get("enrichment");
const withInterval = (ms: number) => ({ ...h.deps, config: { ...h.config, RETENTION_INTERVAL_MS: ms } });

interface Report {
  retention_days: number | null;
  last_pass_at: string | null;
  last_cutoff: string | null;
  removed_last_pass: number;
  removed_total: number;
  passes: number;
}
async function report(): Promise<Report> {
  const res = await h.http.get(`/api/workspaces/${team.workspaceId}/retention`).set(auth(team.token));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Stored `daysAgo` days ago (as if the ingest had happened then). */
async function storedAt(ids: string[], daysAgo: number) {
  await h.deps.db.$executeRaw`
    UPDATE content_store SET created_at = now() - make_interval(days => ${daysAgo}) WHERE id = ANY(${ids}::uuid[])`;
}

const stillStored = async (ids: string[]) =>
  (await h.deps.db.content.findMany({ where: { id: { in: ids } }, select: { id: true } })).map((r) => r.id).sort();

describe("the retention job scheduler and its ticks", { timeout: 60_000 }, () => {
  let fresh: string;

  it("ticks every RETENTION_INTERVAL_MS and removes exactly the originals older than retention_days", async () => {
    const stored = await ingest(h, team.token, team.entityId, [
      { platform: "reddit", content: "An old post about exports.", comments: [{ text: "An old comment on it." }] },
      { platform: "hackernews", content: "An old story about pricing." },
      { platform: "reddit", content: "A recent post about the editor." },
    ]);
    const [oldPost, oldStory, recent] = stored.parent_content_ids as [string, string, string];
    const [oldComment] = stored.comment_content_ids as [string];
    fresh = recent;
    await storedAt([oldPost, oldComment, oldStory], 31);
    await storedAt([recent], 29);
    await h.http.patch(`/api/workspaces/${team.workspaceId}`).set(auth(team.token)).send({ retention_days: 30 }).expect(200);

    const scheduler = startRetentionScheduler(withInterval(EVERY_MS));
    try {
      const job = await until(() => queue().getJobScheduler(RETENTION_SCHEDULER_ID));
      expect(job).toMatchObject({ every: EVERY_MS, name: "retention.tick.v1" });

      const first = await until(async () => {
        const r = await report();
        return r.removed_total === 3 && r.passes >= 1 && r.last_pass_at !== null && r;
      }, 20_000);
      expect(await stillStored([oldPost, oldComment, oldStory, recent])).toEqual([recent]);
      const tombstones = await h.deps.db.contentDeletion.findMany({ where: { workspaceId: team.workspaceId } });
      expect(tombstones.map((t) => t.contentId).sort()).toEqual([oldPost, oldComment, oldStory].sort());
      expect(new Set(tombstones.map((t) => t.reason))).toEqual(new Set(["retention"]));
      expect(Date.parse(first.last_cutoff ?? "")).toBeLessThan(Date.now() - 29.9 * 86_400_000);

      // Later ticks find nothing more: the counts stay, the recent original stays.
      const later = await until(async () => {
        const r = await report();
        return r.passes >= first.passes + 2 && r;
      }, 20_000);
      expect(later).toMatchObject({ retention_days: 30, removed_total: 3, removed_last_pass: 0 });
      expect(await stillStored([recent])).toEqual([recent]);
    } finally {
      await scheduler.close();
    }
  });

  it("does not upsert again when started with the same interval, and does when it changes", async () => {
    const upserts = vi.spyOn(queue(), "upsertJobScheduler");
    try {
      // A fleet of workers starting together: each finds the scheduler as it should be.
      const started = await Promise.all([1, 2, 3].map(() => ensureRetentionScheduler(h.deps.queues, EVERY_MS)));
      expect(started).toEqual([false, false, false]);
      expect(upserts).not.toHaveBeenCalled();
      expect(await queue().getJobScheduler(RETENTION_SCHEDULER_ID)).toMatchObject({ every: EVERY_MS });

      expect(await ensureRetentionScheduler(h.deps.queues, EVERY_MS * 2)).toBe(true);
      expect(upserts).toHaveBeenCalledTimes(1);
      expect(await queue().getJobScheduler(RETENTION_SCHEDULER_ID)).toMatchObject({ every: EVERY_MS * 2 });
      expect(await ensureRetentionScheduler(h.deps.queues, EVERY_MS * 2)).toBe(false);
      expect(upserts).toHaveBeenCalledTimes(1);

      expect(await ensureRetentionScheduler(h.deps.queues, EVERY_MS)).toBe(true);
      expect(upserts).toHaveBeenCalledTimes(2);
      expect(await queue().getJobScheduler(RETENTION_SCHEDULER_ID)).toMatchObject({ every: EVERY_MS });
    } finally {
      upserts.mockRestore();
    }
  });

  it("continues a pass that stopped midway at the next tick; the removed rows stay counted", async () => {
    const stored = await ingest(h, team.token, team.entityId, [
      { platform: "reddit", content: "The oldest post." },
      { platform: "reddit", content: "A post the database refuses to delete for now." },
      { platform: "reddit", content: "Another old post." },
    ]);
    const [oldest, stuck, other] = stored.parent_content_ids as [string, string, string];

    // Deleting `stuck` fails (as a crash or a lost connection would stop the pass there), so every pass
    // deletes the oldest original in its first batch and fails in the next one, tick after tick. The
    // trigger is in place before the three become old; they become old in one statement.
    await h.deps.db.$executeRawUnsafe(`
      CREATE FUNCTION test_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.id = '${stuck}'::uuid THEN RAISE EXCEPTION 'refused by the test'; END IF;
        RETURN OLD;
      END $$`);
    await h.deps.db.$executeRawUnsafe(
      "CREATE TRIGGER test_refuse_delete BEFORE DELETE ON content_store FOR EACH ROW EXECUTE FUNCTION test_refuse_delete()",
    );
    await h.deps.db.$executeRaw`
      UPDATE content_store SET created_at = now() - make_interval(days => CASE id
        WHEN ${oldest}::uuid THEN 40 WHEN ${stuck}::uuid THEN 35 ELSE 32 END)
      WHERE id = ANY(${[oldest, stuck, other]}::uuid[])`;

    const failedTicks = async () =>
      (await queue().getFailed()).filter((j) => j.name === "retention.tick.v1" && j.failedReason.includes("refused by the test"));
    await until(async () => (await failedTicks()).length > 0, 20_000);
    expect(await stillStored([oldest, stuck, other])).toEqual([stuck, other].sort());
    // The batch that went is counted (3 from the first test, 1 now); the pass is left started.
    const stopped = await report();
    expect(stopped.removed_total).toBe(4);
    const state = await h.deps.db.retentionState.findUniqueOrThrow({ where: { workspaceId: team.workspaceId } });
    expect(state.passStartedAt).not.toBeNull();
    // The next ticks fail the same way: no pass completes while the row cannot go.
    const seen = (await failedTicks()).length;
    await until(async () => (await failedTicks()).length > seen, 20_000);
    expect(await report()).toMatchObject({ removed_total: 4, passes: stopped.passes });

    await h.deps.db.$executeRawUnsafe("DROP TRIGGER test_refuse_delete ON content_store");
    const resumed = await until(async () => {
      const r = await report();
      return r.passes > stopped.passes && r;
    }, 20_000);
    expect(await stillStored([oldest, stuck, other, fresh])).toEqual([fresh]);
    // Every row removed is in the total; the pass that completed reports the rows it removed itself.
    // (The next tick may already be under way, so the state's pass_started_at is not checked here.)
    expect(resumed).toMatchObject({ removed_total: 6, removed_last_pass: 2 });
  });

  it("is removed with RETENTION_INTERVAL_MS=0, and no tick is left waiting", async () => {
    expect(await queue().getJobScheduler(RETENTION_SCHEDULER_ID)).toBeDefined();
    const scheduler = startRetentionScheduler(withInterval(0));
    try {
      await until(async () => (await queue().getJobScheduler(RETENTION_SCHEDULER_ID)) === undefined);
      // A tick already due when it went is still run; nothing is scheduled after it.
      await until(async () => {
        const queued = [...(await queue().getDelayed()), ...(await queue().getWaiting()), ...(await queue().getActive())];
        return !queued.some((j) => j.name === "retention.tick.v1");
      });
      expect(await queue().getJobSchedulersCount()).toBe(0);
      // Removing what is not there answers false.
      expect(await ensureRetentionScheduler(h.deps.queues, 0)).toBe(false);
    } finally {
      await scheduler.close();
    }
  });
});
