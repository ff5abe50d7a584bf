import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COLLECTOR_PLATFORMS } from "../../src/intake/collection/collectors/types.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { person } from "../workspaces/support.js";
import { bearer, createJob, newEntity } from "./support.js";

/**
 * The creates a web process gets while an insert is in flight go out together in the next insert
 * (src/intake/collection/insert.ts). In one burst of creates from an editor, a viewer and a stranger, on
 * entities with and without platforms, with repeated and conflicting keys, each create still gets its own
 * answer and row: the editor's are stored as asked, the viewer's 403, the stranger's and the unknown
 * entity's 404, a key sent twice with different bodies stores one job and answers the other 409. The rows
 * of one insert share its transaction id (`xmin`), which shows that the creates were grouped. Real HTTP,
 * PostgreSQL and Redis.
 */
let h: Harness;

beforeAll(async () => {
  // Fewer connections than requests in flight: the creates wait on each other, as under load.
  h = await createHarness({ DATABASE_POOL_SIZE: "2" });
});
afterAll(() => h.close());

interface Sent {
  who: "editor" | "viewer" | "stranger";
  body: Record<string, unknown>;
  expected: number;
}

describe("creates that arrive together", () => {
  it("share inserts, and each answers and stores exactly what it alone would", async () => {
    const owner = await person(h);
    const [editor, viewer, stranger] = [await person(h), await person(h), await person(h)];
    const listed = await newEntity(h, owner.token, { name: `Listed ${randomId()}`, platforms: ["reddit", "youtube", "reddit", "github"] });
    const bare = await newEntity(h, owner.token, { name: `Bare ${randomId()}` });
    for (const [member, role] of [
      [editor, "editor"],
      [viewer, "viewer"],
    ] as const) {
      await h.http
        .post(`/api/workspaces/${listed.workspace_id}/members`)
        .set(bearer(owner.token))
        .send({ user_id: member.userId, role })
        .expect(201);
    }
    const tokens = { editor: editor.token, viewer: viewer.token, stranger: stranger.token };

    const run = randomId("burst-");
    const sent: Sent[] = [];
    for (let i = 0; i < 24; i++) {
      const entity = i % 2 === 0 ? listed : bare;
      sent.push({
        who: "editor",
        body: {
          entity_id: entity.id,
          objective: `Why do teams churn, part ${i}?`,
          questions: i % 3 === 0 ? [`What broke in week ${i}?`, "Who left?"] : [],
          depth: i % 4 === 0 ? "deep" : "brief",
          platforms: i % 5 === 0 ? ["hackernews", "web", "hackernews"] : [],
          collection_only: i % 2 === 1,
          idempotency_key: `${run}-editor-${i}`,
        },
        expected: 200,
      });
    }
    for (let i = 0; i < 4; i++) {
      sent.push({
        who: "viewer",
        body: { entity_id: listed.id, objective: "Viewers may not start jobs", idempotency_key: `${run}-viewer-${i}` },
        expected: 403,
      });
      sent.push({
        who: "stranger",
        body: { entity_id: listed.id, objective: "Strangers see no entity", idempotency_key: `${run}-stranger-${i}` },
        expected: 404,
      });
    }
    sent.push({
      who: "editor",
      body: { entity_id: crypto.randomUUID(), objective: "An entity nobody has", idempotency_key: `${run}-unknown` },
      expected: 404,
    });
    // One key with two bodies: exactly one of them is stored, the other is refused.
    const conflicted = `${run}-conflict`;
    for (const objective of ["First reading of the key", "Second reading of the key"]) {
      sent.push({ who: "editor", body: { entity_id: listed.id, objective, idempotency_key: conflicted }, expected: 0 });
    }
    // One key sent three times alike: one job, answered to each.
    const repeated = `${run}-repeated`;
    for (let i = 0; i < 3; i++) {
      sent.push({
        who: "editor",
        body: { entity_id: bare.id, objective: "The same request thrice", idempotency_key: repeated },
        expected: 200,
      });
    }

    const answers = await Promise.all(sent.map((s) => createJob(h, tokens[s.who], s.body)));

    for (const [i, s] of sent.entries()) {
      if (s.expected !== 0)
        expect(answers[i]?.status, `${s.who} ${JSON.stringify(s.body)}: ${JSON.stringify(answers[i]?.body)}`).toBe(s.expected);
    }
    expect(answers.filter((a) => a.status === 403).every((a) => a.body.code === "forbidden")).toBe(true);

    const conflict = answers.filter((_, i) => sent[i]?.body.idempotency_key === conflicted);
    expect(conflict.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(conflict.find((a) => a.status === 409)?.body.code).toBe("idempotency_conflict");
    const thrice = answers.filter((_, i) => sent[i]?.body.idempotency_key === repeated);
    expect(new Set(thrice.map((a) => a.body.job_id)).size).toBe(1);

    // Every editor's job is stored as its request asked, on its entity, with its defaults resolved.
    const rows = await h.deps.db.collectionJob.findMany({ where: { idempotencyKey: { startsWith: run } } });
    expect(rows).toHaveLength(24 + 2);
    for (const [i, s] of sent.entries()) {
      if (s.who !== "editor" || s.expected !== 200 || s.body.idempotency_key === repeated) continue;
      const row = rows.find((r) => r.idempotencyKey === s.body.idempotency_key);
      expect(row?.id).toBe(answers[i]?.body.job_id);
      const asked = s.body.platforms as string[];
      const platforms =
        asked.length > 0 ? [...new Set(asked)] : s.body.entity_id === listed.id ? ["reddit", "github"] : [...COLLECTOR_PLATFORMS];
      expect(row).toMatchObject({
        userId: editor.userId,
        entityId: s.body.entity_id,
        objective: s.body.objective,
        questions: s.body.questions,
        depth: s.body.depth,
        platforms,
        collectionOnly: s.body.collection_only,
        status: "queued",
        route: "collection",
      });
    }
    const winner = sent.findIndex((s, i) => s.body.idempotency_key === conflicted && answers[i]?.status === 200);
    const stored = rows.find((r) => r.idempotencyKey === conflicted);
    expect(stored).toMatchObject({ id: answers[winner]?.body.job_id, objective: sent[winner]?.body.objective });

    // Grouped: fewer inserting transactions than rows.
    const [inserts] = await h.deps.db.$queryRaw<{ transactions: number }[]>`
      SELECT count(DISTINCT xmin::text)::int AS transactions FROM collection_jobs WHERE idempotency_key LIKE ${`${run}%`}`;
    expect(inserts?.transactions).toBeLessThan(rows.length);
  }, 60_000);
});
