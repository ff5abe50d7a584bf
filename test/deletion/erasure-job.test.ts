import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markErasureFailed } from "../../src/governance/deletion/erasure-run.js";
import { erasureProcessor } from "../../workers/erasures.js";
import { waitFor } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { addMember, auth, createTeam, ingest, type Team } from "./support.js";

/**
 * A large erasure (more originals than ERASURE_SYNC_LIMIT, here 1) is answered 202 and drained by
 * `erasure.run.v1` in batches of ERASURE_BATCH_SIZE (here 2), each batch one transaction; its progress
 * is read from the erasure, and one that stopped (failed) resumes when it is asked for again.
 */
let h: Harness;
let team: Team;
let admin: { token: string; userId: string };

beforeAll(async () => {
  h = await createHarness({ ERASURE_SYNC_LIMIT: "1", ERASURE_BATCH_SIZE: "2" });
  team = await createTeam(h);
  admin = await addMember(h, team, "admin");
});
afterAll(async () => {
  await h?.close();
});

const read = (id: string) => h.http.get(`/api/workspaces/${team.workspaceId}/erasures/${id}`).set(auth(admin.token));

describe("an erasure too large for its request", () => {
  it("answers 202, shows its progress, resumes after a failure and completes in batches", async () => {
    const posts = Array.from({ length: 5 }, (_, i) => ({
      platform: "github",
      author: "prolific",
      content: `Issue ${i}: the sync fails.`,
      comments: [{ author: "maintainer", text: `Reply to issue ${i}.` }],
    }));
    await ingest(h, team.token, team.entityId, [...posts, { platform: "github", author: "maintainer", content: "Release notes." }]);

    const res = await h.http
      .post(`/api/workspaces/${team.workspaceId}/erasures`)
      .set(auth(admin.token))
      .send({ platform: "github", author: "prolific" });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.headers.location).toBe(res.body.next);
    expect(res.body).toMatchObject({ status: "running", progress: { originals_matched: 5, remaining: 5, rows_deleted: 0 } });
    const id = res.body.id as string;
    // Recorded: from now on the author's new items are skipped, though nothing was deleted yet.
    const skipped = await ingest(h, team.token, team.entityId, [{ platform: "github", author: "Prolific", content: "Issue 6." }]);
    expect(skipped.skipped_erased).toBe(1);

    // A stopped erasure says so; asking again resumes it (the queued job runs it).
    await markErasureFailed(h.deps.db, id, new Error("the worker stopped"));
    expect((await read(id)).body).toMatchObject({ status: "failed", error: "the worker stopped", progress: { remaining: 5 } });
    const resumed = await h.http
      .post(`/api/workspaces/${team.workspaceId}/erasures`)
      .set(auth(admin.token))
      .send({ platform: "github", author: "PROLIFIC" });
    expect(resumed.status).toBe(202);
    expect(resumed.body).toMatchObject({ id, status: "running", error: null });

    h.startWorkers({ "erasure.run.v1": erasureProcessor });
    const done = await waitFor(async () => {
      const body = (await read(id)).body;
      return body.status === "completed" ? body : undefined;
    });
    expect(done.progress).toMatchObject({ originals_matched: 5, remaining: 0, rows_deleted: 10, batches: 3 });
    const left = await h.deps.db.content.findMany({ where: { entityId: team.entityId, platform: "github" }, select: { author: true } });
    expect(left.map((r) => r.author)).toEqual(["maintainer"]);
    const audit = await h.http.get(`/api/workspaces/${team.workspaceId}/audit`).set(auth(team.token));
    expect(audit.body.entries[0]).toMatchObject({ action: "author.erased", target: id, detail: { rows_deleted: 10, batches: 3 } });
    const tombstones = await h.deps.db.contentDeletion.findMany({ where: { erasureId: id } });
    expect(tombstones).toHaveLength(10);
    expect(new Set(tombstones.map((t) => t.reason))).toEqual(new Set(["author_erased"]));
  }, 30_000);
});
