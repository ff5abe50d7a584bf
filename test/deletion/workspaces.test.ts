import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { personalWorkspace } from "../../src/access/workspaces/access.js";
import { runScheduledPass } from "../../src/governance/deletion/retention.js";
import { deleteWorkspace } from "../../src/governance/deletion/workspaces.js";
import { Prisma } from "../../src/platform/db.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { listen, openStream } from "../analysis/sse-client.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { addMember, auth, createTeam, enrich, ingest, type Team, tablesContaining } from "./support.js";

/**
 * Deleting a workspace: its owner deletes it, it is invisible to its members and their keys at once,
 * its jobs are cancelled and its routines paused, its owner may restore it during the grace period, and
 * after it a scheduled pass purges everything of it: no column of any table holds a word only it had,
 * and another workspace keeps all of its own.
 */
const MARKER = "quorvexian";
const OTHER = "blenthomic";

let h: Harness;
let base: string;
let closeServer: () => Promise<void>;

beforeAll(async () => {
  h = await createHarness();
  ({ baseUrl: base, close: closeServer } = await listen(h));
  h.startWorkers({ "analysis.run.v1": analysisProcessor });
}, 60_000);
afterAll(async () => {
  await closeServer?.();
  await h?.close();
});

const del = (team: Team, token = team.token) => h.http.delete(`/api/workspaces/${team.workspaceId}`).set(auth(token));
const restore = (team: Team, token = team.token) => h.http.post(`/api/workspaces/${team.workspaceId}/restore`).set(auth(token));

async function key(token: string): Promise<string> {
  const res = await h.http
    .post("/api/user/keys")
    .set(auth(token))
    .send({ name: "all", scopes: ["*"] });
  expect(res.status).toBe(201);
  return res.body.raw_key;
}

describe("DELETE /api/workspaces/{workspace_id}", () => {
  it("is the owner's: admins and below get 403, outsiders 404, a personal workspace 409", async () => {
    const team = await createTeam(h);
    for (const role of ["viewer", "editor", "admin"]) {
      const member = await addMember(h, team, role);
      const res = await del(team, member.token);
      expect(res.status, role).toBe(403);
      expect(res.body.code).toBe("forbidden");
      expect((await restore(team, member.token)).status, role).toBe(403);
    }
    const outsider = await createTeam(h, "Outsider");
    expect((await del(team, outsider.token)).status).toBe(404);
    expect((await restore(team, outsider.token)).status).toBe(404);
    expect((await h.http.delete("/api/workspaces/not-a-uuid").set(auth(team.token))).status).toBe(404);
    // A key does not delete a workspace: it takes the owner's session.
    expect((await h.http.delete(`/api/workspaces/${team.workspaceId}`).set("X-API-Key", await key(team.token))).status).toBe(401);

    const personal = await personalWorkspace(h.deps.db, team.userId);
    const refused = await h.http.delete(`/api/workspaces/${personal}`).set(auth(team.token));
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("conflict");
    const row = await h.deps.db.workspace.findUniqueOrThrow({ where: { id: team.workspaceId } });
    expect(row.state).toBe("active");
  });

  it("hides the workspace from members and keys during the grace period, cancels its jobs, and restores it", async () => {
    const team = await createTeam(h);
    const editor = await addMember(h, team, "editor");
    const editorKey = await key(editor.token);
    const [contentId] = (await ingest(h, team.token, team.entityId, [{ platform: "reddit", content: "A post about exports." }]))
      .content_ids as [string];
    const webhook = await h.http
      .post(`/api/workspaces/${team.workspaceId}/webhooks`)
      .set(auth(team.token))
      .send({ url: "https://hooks.webhooks.invalid/x" });
    expect(webhook.status).toBe(201);
    const link = await h.http.post("/api/share-links").set(auth(team.token)).send({ resource: "entity", id: team.entityId });
    expect(link.status).toBe(201);
    const job = await h.http
      .post("/agent/v1/ingest/collection/jobs")
      .set(auth(editor.token))
      .send({
        entity_id: team.entityId,
        objective: "Why do teams churn?",
        idempotency_key: `k-${randomUUID()}`,
        platforms: ["hackernews"],
        collection_only: true,
      });
    expect(job.status, JSON.stringify(job.body)).toBeLessThan(300);
    const skill = await h.deps.db.skill.create({ data: { entityId: team.entityId, key: "weekly", title: "Weekly review" } });
    const routine = await h.deps.db.skillRoutine.create({
      data: {
        skillId: skill.id,
        skillKey: skill.key,
        entityId: team.entityId,
        workspaceId: team.workspaceId,
        createdBy: team.userId,
        updatedBy: team.userId,
        enabled: true,
        intervalHours: 24,
        sourceMode: "saved",
        maxChargeCents: 1000,
        nextRunAt: new Date(Date.now() + 3_600_000),
      },
    });

    const res = await del(team);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: team.workspaceId, state: "deleting", role: "owner", deletion: { requested_by: team.userId } });
    const purgeAfter = Date.parse(res.body.deletion.purge_after);
    expect(Math.abs(purgeAfter - Date.now() - 168 * 3_600_000)).toBeLessThan(60_000);

    // Members and their keys: 404 everywhere, as for an unknown workspace.
    for (const [path, who] of [
      [`/api/entities/${team.entityId}`, auth(editor.token)],
      [`/api/entities/${team.entityId}`, { "X-API-Key": editorKey }],
      [`/api/workspaces/${team.workspaceId}/members`, auth(team.token)],
      [`/api/workspaces/${team.workspaceId}/audit`, auth(team.token)],
      [`/agent/v1/ingest/collection/jobs/${job.body.job_id}`, auth(editor.token)],
    ] as const) {
      const read = await h.http.get(path).set(who);
      expect(read.status, path).toBe(404);
    }
    const write = await h.http
      .post("/agent/v1/ingest/content")
      .set("X-API-Key", editorKey)
      .send({ entity_id: team.entityId, sources: [{ platform: "reddit", content: "More." }] });
    expect(write.status).toBe(404);
    expect((await h.http.delete(`/agent/v1/content/${contentId}`).set(auth(team.token))).status).toBe(404);
    const entities = await h.http.get("/api/entities").set(auth(editor.token));
    expect(entities.body.map((e: { id: string }) => e.id)).not.toContain(team.entityId);
    expect((await h.http.get(new URL(link.body.url).pathname)).status).toBe(404);

    // Listed for its owner (who may restore it), not for the other members.
    const mine = await h.http.get("/api/workspaces").set(auth(team.token));
    expect(mine.body.workspaces.find((w: { id: string }) => w.id === team.workspaceId)).toMatchObject({
      state: "deleting",
      purge_after: res.body.deletion.purge_after,
    });
    const theirs = await h.http.get("/api/workspaces").set(auth(editor.token));
    expect(theirs.body.workspaces.map((w: { id: string }) => w.id)).not.toContain(team.workspaceId);

    // Its job is cancelled (and no webhook delivery recorded for that end), its routine paused.
    const jobRow = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: job.body.job_id } });
    expect(jobRow.status).toBe("cancelled");
    expect(await h.deps.db.webhookDelivery.count({ where: { endpointId: webhook.body.id } })).toBe(0);
    expect((await h.deps.db.skillRoutine.findUniqueOrThrow({ where: { id: routine.id } })).enabled).toBe(false);

    // Deleting again answers the same; the deletion is audited and recorded.
    const again = await del(team);
    expect(again.status).toBe(200);
    expect(again.body.deletion.purge_after).toBe(res.body.deletion.purge_after);
    const record = await h.deps.db.workspaceDeletion.findFirstOrThrow({ where: { workspaceId: team.workspaceId } });
    expect(record).toMatchObject({ status: "pending", requestedBy: team.userId, jobsCancelled: 1 });

    // The owner restores it: access is back, the routine stays paused.
    const back = await restore(team);
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(back.body).toMatchObject({ state: "active", deletion: null });
    expect((await h.http.get(`/api/entities/${team.entityId}`).set(auth(editor.token))).status).toBe(200);
    expect((await h.http.get(`/api/entities/${team.entityId}`).set("X-API-Key", editorKey)).status).toBe(200);
    expect((await h.http.get(new URL(link.body.url).pathname)).status).toBe(200);
    expect((await h.deps.db.skillRoutine.findUniqueOrThrow({ where: { id: routine.id } })).enabled).toBe(false);
    expect((await restore(team)).status).toBe(200);
    const audit = await h.http.get(`/api/workspaces/${team.workspaceId}/audit`).set(auth(team.token));
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual(
      expect.arrayContaining(["workspace.deletion_requested", "workspace.restored"]),
    );
    expect((await h.deps.db.workspaceDeletion.findFirstOrThrow({ where: { workspaceId: team.workspaceId } })).status).toBe("restored");
    // Nothing purges an active workspace.
    expect((await runScheduledPass(h.deps)).purged).toBe(0);
  });
});

describe("the purge after the grace period", () => {
  it("removes every word and row of the workspace and leaves the other workspace as it was", async () => {
    const doomed = await createTeam(h, `Acme ${MARKER}`);
    const other = await createTeam(h, `Globex ${OTHER}`);
    const member = await addMember(h, doomed, "editor");
    const stored = await ingest(h, doomed.token, doomed.entityId, [
      {
        platform: "reddit",
        author: `${MARKER}_fan`,
        title: `The ${MARKER} export`,
        url: `https://reddit.example.com/${MARKER}`,
        content: `The ${MARKER} export keeps crashing and the ${MARKER} is terrible.`,
        comments: [{ text: `Same, the ${MARKER} sync is slow.` }],
      },
      { platform: "hackernews", content: `Another ${MARKER} complaint: the editor is slow.` },
    ]);
    const kept = await ingest(h, other.token, other.entityId, [{ platform: "reddit", content: `The ${OTHER} export works well.` }]);
    await enrich(h, [...stored.content_ids, ...kept.content_ids]);
    // An analysis and a knowledge record quote it; a webhook, a share link and an erasure belong to it.
    const stream = await openStream(`${base}/agent/v1/analysis/run`, {
      method: "POST",
      token: doomed.token,
      body: { question: `What about ${MARKER}?`, entity_id: doomed.entityId },
    });
    await stream.closed;
    expect(stream.events.at(-1)?.event).toBe("result");
    const record = await h.http
      .post("/agent/v1/knowledge/insights")
      .set(auth(doomed.token))
      .send({
        entity_id: doomed.entityId,
        request_id: randomUUID(),
        expected_revision: 0,
        title: `${MARKER} crashes`,
        summary: `People say the ${MARKER} export crashes.`,
        evidence: [{ content_id: stored.parent_content_ids[0], quote: `The ${MARKER} export keeps crashing` }],
      });
    expect(record.status, JSON.stringify(record.body)).toBe(201);
    await h.http
      .post(`/api/workspaces/${doomed.workspaceId}/webhooks`)
      .set(auth(doomed.token))
      .send({ url: `https://hooks.webhooks.invalid/${MARKER}` })
      .expect(201);
    await h.http.post("/api/share-links").set(auth(doomed.token)).send({ resource: "entity", id: doomed.entityId }).expect(201);
    expect(await tablesContaining(h, MARKER)).toEqual(expect.arrayContaining(["content_store.content", "analyses.result"]));
    const otherBefore = await otherTables(other);

    // A tiny grace period: due at once; past purge_after the owner can no longer restore it.
    const zeroGrace = { ...h.deps, config: { ...h.config, WORKSPACE_DELETE_GRACE_HOURS: 0 } };
    await deleteWorkspace(zeroGrace, doomed.userId, doomed.workspaceId);
    const late = await restore(doomed);
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("conflict");

    // A small batch size: the originals go over several transactions.
    const pass = await runScheduledPass({ ...h.deps, config: { ...h.config, RETENTION_BATCH_SIZE: 1 } });
    expect(pass.purged).toBe(1);
    expect(await tablesContaining(h, MARKER)).toEqual([]);
    expect(await rowsNaming(doomed)).toEqual([]);
    expect(await otherTables(other)).toEqual(otherBefore);
    expect(await tablesContaining(h, OTHER)).toEqual(expect.arrayContaining(["content_store.content", "entities.name"]));

    // Outside the workspace only its deletion record stays: ids, times and counts.
    const deletion = await h.deps.db.workspaceDeletion.findFirstOrThrow({ where: { workspaceId: doomed.workspaceId } });
    expect(deletion.status).toBe("purged");
    expect(deletion.removed).toMatchObject({ content_rows: 3, members: 2, entities: 1, analyses: 1 });
    expect((await h.http.get("/api/workspaces").set(auth(doomed.token))).body.workspaces.map((w: { id: string }) => w.id)).not.toContain(
      doomed.workspaceId,
    );
    expect((await restore(doomed)).status).toBe(404);
    expect((await del(doomed)).status).toBe(404);
    expect((await h.http.get(`/api/entities/${doomed.entityId}`).set(auth(member.token))).status).toBe(404);
    // The users and their keys stay (they are the users', not the workspace's).
    expect(await h.deps.db.user.count({ where: { id: { in: [doomed.userId, member.userId] } } })).toBe(2);

    // Idempotent: the next pass finds nothing to purge.
    expect((await runScheduledPass(h.deps)).purged).toBe(0);
  }, 60_000);
});

/** Every row of any table whose workspace_id, entity_id or project_id names the team's workspace, entity or project. */
async function rowsNaming(team: Team): Promise<string[]> {
  const columns = await h.deps.db.$queryRaw<{ table_name: string; column_name: string }[]>`
    SELECT c.table_name, c.column_name FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
      AND c.column_name IN ('workspace_id', 'entity_id', 'project_id', 'scope_id') AND c.data_type = 'uuid'
      AND c.table_name <> 'workspace_deletions'`;
  const ids = [team.workspaceId, team.entityId];
  const found: string[] = [];
  for (const { table_name: table, column_name: column } of columns) {
    const ident = (name: string) => Prisma.raw(`"${name.replaceAll('"', '""')}"`);
    const [row] = await h.deps.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM ${ident(table)} WHERE ${ident(column)} = ANY(${ids}::uuid[])`;
    if ((row?.n ?? 0) > 0) found.push(`${table}.${column}`);
  }
  return found;
}

/** The other team's rows in the tables a purge deletes from. */
async function otherTables(team: Team) {
  const db = h.deps.db;
  return {
    content: await db.content.count({ where: { workspaceId: team.workspaceId } }),
    units: await db.opinionUnit.count({ where: { entityId: team.entityId } }),
    entities: await db.entity.count({ where: { workspaceId: team.workspaceId } }),
    projects: await db.project.count({ where: { workspaceId: team.workspaceId } }),
    members: await db.workspaceMember.count({ where: { workspaceId: team.workspaceId } }),
    skills: await db.skill.count({ where: { entityId: team.entityId } }),
    audit: await db.workspaceAudit.count({ where: { workspaceId: team.workspaceId } }),
    workspace: (await db.workspace.findUniqueOrThrow({ where: { id: team.workspaceId } })).state,
  };
}
