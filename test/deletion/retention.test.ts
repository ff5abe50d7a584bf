import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RETENTION_LEASE_SECONDS, runRetentionPass } from "../../src/governance/deletion/retention.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { addMember, auth, createTeam, ingest, type Team, tablesContaining } from "./support.js";

/**
 * Retention: admins set `retention_days` on a workspace; the scheduled pass deletes the originals
 * stored before the window (with everything below them) through the cascade, reason `retention`,
 * and reports per workspace what it removed. Other workspaces, and newer originals, are untouched.
 */
const OLD = "vantorquill";
const FRESH = "melbrisket";

let h: Harness;
let team: Team;
let other: Team;
let admin: { token: string; userId: string };

beforeAll(async () => {
  h = await createHarness({ RETENTION_BATCH_SIZE: "1" });
  team = await createTeam(h);
  other = await createTeam(h, "Globex");
  admin = await addMember(h, team, "admin");
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const settings = (body: unknown, token = admin.token, workspaceId = team.workspaceId) =>
  h.http
    .patch(`/api/workspaces/${workspaceId}`)
    .set(auth(token))
    .send(body as object);
const report = (token = admin.token) => h.http.get(`/api/workspaces/${team.workspaceId}/retention`).set(auth(token));

/** Stored `days` ago, as if the ingest had happened then. */
async function age(ids: string[], days: number) {
  await h.deps.db.$executeRaw`
    UPDATE content_store SET created_at = now() - make_interval(days => ${days}) WHERE id = ANY(${ids}::uuid[])`;
}

describe("retention_days", () => {
  it("is set by admins (403 below, 404 outside), bounded 1–3650, null for forever, and audited", async () => {
    const editor = await addMember(h, team, "editor");
    expect((await settings({ retention_days: 30 }, editor.token)).status).toBe(403);
    expect((await settings({ retention_days: 30 }, other.token)).status).toBe(404);
    expect((await report(editor.token)).status).toBe(403);
    expect((await report(other.token)).status).toBe(404);
    for (const bad of [0, 3651, 1.5, "30"]) expect((await settings({ retention_days: bad })).status, String(bad)).toBe(422);
    expect((await settings({})).status).toBe(422);

    const set = await settings({ retention_days: 30 });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ id: team.workspaceId, retention_days: 30, state: "active", role: "admin" });
    const cleared = await settings({ retention_days: null });
    expect(cleared.body.retention_days).toBeNull();
    await settings({ retention_days: 30 }).expect(200);
    const listed = await h.http.get("/api/workspaces").set(auth(admin.token));
    expect(listed.body.workspaces.find((w: { id: string }) => w.id === team.workspaceId).retention_days).toBe(30);
    const audit = await h.http.get(`/api/workspaces/${team.workspaceId}/audit`).set(auth(admin.token));
    expect(audit.body.entries.filter((e: { action: string }) => e.action === "workspace.retention_changed")).toHaveLength(3);
    expect((await report()).body).toEqual({
      workspace_id: team.workspaceId,
      retention_days: 30,
      last_pass_at: null,
      last_cutoff: null,
      removed_last_pass: 0,
      removed_total: 0,
      passes: 0,
    });
  });

  it("removes only originals stored before the window, reports the counts, and repeats as a no-op", async () => {
    const stored = await ingest(h, team.token, team.entityId, [
      { platform: "reddit", content: `The ${OLD} export crashes.`, comments: [{ text: `The ${OLD} sync too.` }] },
      { platform: "hackernews", content: `Old ${OLD} news.` },
      { platform: "reddit", content: `The ${FRESH} editor is great.` },
    ]);
    const [oldSource, oldNews, fresh] = stored.parent_content_ids as [string, string, string];
    await age([oldSource, oldNews], 31);
    // Inside the window by a day: kept.
    await age([fresh], 29);
    // Another workspace without a setting keeps its old originals.
    const theirs = await ingest(h, other.token, other.entityId, [{ platform: "reddit", content: `The ${OLD} export of theirs.` }]);
    await age(theirs.content_ids, 400);

    const pass = await runRetentionPass(h.deps, h.config.RETENTION_BATCH_SIZE);
    expect(pass).toEqual({ workspaces: 1, removed: 3 });
    const left = await h.deps.db.content.findMany({ where: { workspaceId: team.workspaceId }, select: { id: true } });
    expect(left.map((r) => r.id)).toEqual([fresh]);
    expect(await h.deps.db.content.count({ where: { workspaceId: other.workspaceId } })).toBe(1);
    // The word is left only in the other workspace's original.
    expect(await tablesContaining(h, OLD)).toEqual(["content_store.content"]);
    const tombstones = await h.deps.db.contentDeletion.findMany({ where: { workspaceId: team.workspaceId } });
    expect(tombstones).toHaveLength(3);
    expect(new Set(tombstones.map((t) => t.reason))).toEqual(new Set(["retention"]));

    const first = await report();
    expect(first.body).toMatchObject({ retention_days: 30, removed_last_pass: 3, removed_total: 3, passes: 1 });
    expect(Date.parse(first.body.last_cutoff)).toBeLessThan(Date.now() - 29.9 * 86_400_000);
    const audit = await h.http.get(`/api/workspaces/${team.workspaceId}/audit`).set(auth(admin.token));
    const entry = audit.body.entries.find((e: { action: string }) => e.action === "content.retention_removed");
    expect(entry).toMatchObject({ actor_id: null, detail: { retention_days: 30, rows: 3, originals: 2, comments: 1 } });

    // Again: nothing older is left, and the counts say so.
    expect(await runRetentionPass(h.deps, h.config.RETENTION_BATCH_SIZE)).toEqual({ workspaces: 1, removed: 0 });
    expect((await report()).body).toMatchObject({ removed_last_pass: 0, removed_total: 3, passes: 2 });
    const entries = (await h.http.get(`/api/workspaces/${team.workspaceId}/audit`).set(auth(admin.token))).body.entries;
    expect(entries.filter((e: { action: string }) => e.action === "content.retention_removed")).toHaveLength(1);

    // Without a setting, nothing is removed.
    await settings({ retention_days: null }).expect(200);
    await age([fresh], 90);
    expect(await runRetentionPass(h.deps, h.config.RETENTION_BATCH_SIZE)).toEqual({ workspaces: 0, removed: 0 });
    expect(await h.deps.db.content.count({ where: { workspaceId: team.workspaceId } })).toBe(1);
  });

  it("leaves a workspace another pass holds, and audits a stopped pass's removals when the next one starts", async () => {
    await settings({ retention_days: 30 }).expect(200);
    const stored = await ingest(h, team.token, team.entityId, [
      { platform: "reddit", content: `Another ${OLD} crash.` },
      { platform: "reddit", content: `Yet another ${OLD} crash.` },
    ]);
    await age(stored.parent_content_ids, 45);
    const state = (sql: string) => h.deps.db.$executeRawUnsafe(sql, team.workspaceId);

    // A pass is running (its batches renewed the hold a moment ago) and has removed 4 rows so far.
    await state(`UPDATE retention_states SET pass_started_at = now() - interval '10 minutes', pass_heartbeat_at = now(),
      pass_cutoff = now() - interval '30 days', pass_removed = 4 WHERE workspace_id = $1::uuid`);
    expect(await runRetentionPass(h.deps, h.config.RETENTION_BATCH_SIZE)).toEqual({ workspaces: 1, removed: 0 });
    expect(await h.deps.db.content.count({ where: { id: { in: stored.parent_content_ids } } })).toBe(2);

    // That pass stopped: no batch has renewed the hold for longer than the lease.
    await state(`UPDATE retention_states SET pass_heartbeat_at = now() - make_interval(secs => ${RETENTION_LEASE_SECONDS + 5})
      WHERE workspace_id = $1::uuid`);
    // The two, and the original the previous test aged past the window.
    expect(await runRetentionPass(h.deps, h.config.RETENTION_BATCH_SIZE)).toEqual({ workspaces: 1, removed: 3 });
    const entries = (await h.http.get(`/api/workspaces/${team.workspaceId}/audit`).set(auth(admin.token))).body.entries as {
      action: string;
      detail: Record<string, unknown>;
    }[];
    const removals = entries.filter((e) => e.action === "content.retention_removed").map((e) => e.detail);
    expect(removals).toContainEqual(expect.objectContaining({ stopped: true, rows: 4, retention_days: 30 }));
    expect(removals).toContainEqual(expect.objectContaining({ rows: 3, originals: 3 }));
    expect((await report()).body).toMatchObject({ removed_last_pass: 3 });
    const [after] = await h.deps.db.$queryRaw<{ pass_started_at: Date | null; pass_heartbeat_at: Date | null }[]>`
      SELECT pass_started_at, pass_heartbeat_at FROM retention_states WHERE workspace_id = ${team.workspaceId}::uuid`;
    expect(after).toEqual({ pass_started_at: null, pass_heartbeat_at: null });
  });
});
