import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createKeyFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/** Actions (/api/sweeps/objects): saved follow-up plans derived from a revision of a finding, with its evidence. */
let h: Harness;
let token: string;
let ctx: { workspace_id: string; company: { id: string }; products: { id: string }[] };
let contentIds: string[];
let insightId: string;

const QUOTE_A = "The export to CSV fails every time";
const QUOTE_B = "exports time out on large workspaces";

const finding = (revision: number, evidence: { content_id: string; quote: string }[], title = "Exports fail") =>
  ({
    entity_id: ctx.company.id,
    request_id: randomUUID(),
    expected_revision: revision,
    title,
    summary: "Teams report that exporting fails or times out.",
    evidence,
  }) as const;

const createAction = (body: Record<string, unknown>, auth: Record<string, string> = bearer(token)) =>
  h.http.post("/api/sweeps/objects").set(auth).send(body);
const list = (query: string, auth: Record<string, string> = bearer(token)) => h.http.get(`/api/sweeps/objects?${query}`).set(auth);
const patch = (id: string, body: Record<string, unknown>, auth: Record<string, string> = bearer(token)) =>
  h.http.patch(`/api/sweeps/objects/${id}`).set(auth).send(body);

beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
  const onboarded = await h.http
    .post("/api/entities/onboarding")
    .set(bearer(token))
    .send({ request_id: randomUUID(), company: { name: "Acme Notes" }, products: [{ name: "Acme Export" }] })
    .expect(201);
  ctx = onboarded.body;
  const ingested = await h.http
    .post("/agent/v1/ingest/content")
    .set(bearer(token))
    .send({
      entity_id: ctx.company.id,
      sources: [
        {
          id: "a",
          platform: "reddit",
          url: "https://reddit.com/r/acme/a",
          author: "ana",
          content: `${QUOTE_A}, so I copy tables by hand.`,
        },
        { id: "b", platform: "hackernews", author: "bo", content: `Their ${QUOTE_B}.` },
      ],
    })
    .expect(200);
  contentIds = ingested.body.content_ids;
  const created = await h.http
    .post("/agent/v1/knowledge/insights")
    .set(bearer(token))
    .send(
      finding(0, [
        { content_id: contentIds[0] as string, quote: QUOTE_A },
        { content_id: contentIds[1] as string, quote: QUOTE_B },
      ]),
    );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  insightId = created.body.record.id;
});
afterAll(() => h.close());

describe("POST /api/sweeps/objects", () => {
  it("saves an action from the finding's current revision, with the finding's verbatim evidence; a retry answers the same action", async () => {
    const res = await createAction({ entity_id: ctx.company.id, insight_id: insightId, object_type: "pain_point", urgency: "high" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.any(String),
      entity_id: ctx.company.id,
      object_type: "pain_point",
      title: "Exports fail",
      summary: "Teams report that exporting fails or times out.",
      status: "open",
      urgency: "high",
      impact_score: null,
      signal_count: 2,
      knowledge_ref: { insight_id: insightId, revision: 1, current_revision: 1, title: "Exports fail" },
      payload: { action_plan: null },
      revision: 1,
    });
    expect(res.body.evidence).toEqual([
      expect.objectContaining({
        position: 0,
        content_id: contentIds[0],
        quote: QUOTE_A,
        start: 0,
        end: QUOTE_A.length,
        relation: "supports",
        available: true,
        platform: "reddit",
        url: "https://reddit.com/r/acme/a",
        author: "ana",
      }),
      expect.objectContaining({
        position: 1,
        content_id: contentIds[1],
        quote: QUOTE_B,
        available: true,
        platform: "hackernews",
        author: "bo",
      }),
    ]);
    const source = await h.deps.db.content.findUniqueOrThrow({ where: { id: contentIds[1] as string } });
    const b = res.body.evidence[1];
    expect([...source.content].slice(b.start, b.end).join("")).toBe(QUOTE_B);

    const retry = await createAction({ entity_id: ctx.company.id, insight_id: insightId, object_type: "pain_point", urgency: "high" });
    expect(retry.status).toBe(200);
    expect(retry.body.id).toBe(res.body.id);
    const other = await createAction({ entity_id: ctx.company.id, insight_id: insightId, object_type: "pain_point", urgency: "low" });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: "conflict", action: { id: res.body.id, urgency: "high" } });
    // Another type from the same finding is another action.
    const plan = {
      steps: ["Reproduce the export failure", "Ship a streaming export"],
      owner: "platform team",
      assumptions: ["projected: fewer tickets"],
    };
    const request = await createAction({
      entity_id: ctx.company.id,
      insight_id: insightId,
      object_type: "feature_request",
      title: "Streaming CSV export",
      action_plan: plan,
    });
    expect(request.status).toBe(201);
    expect(request.body).toMatchObject({ title: "Streaming CSV export", urgency: null, payload: { action_plan: plan } });
  });

  it("refuses findings of other entities, revisions that do not exist, and bad bodies", async () => {
    const product = ctx.products[0]?.id as string;
    expect((await createAction({ entity_id: product, insight_id: insightId, object_type: "trend" })).status).toBe(404);
    const future = await createAction({ entity_id: ctx.company.id, insight_id: insightId, insight_revision: 9, object_type: "trend" });
    expect(future.status).toBe(404);
    const badType = await createAction({ entity_id: ctx.company.id, insight_id: insightId, object_type: "rumour" });
    expect(badType.status).toBe(422);
    expect(badType.body.detail[0]).toMatchObject({ loc: ["body", "object_type"], type: "enum" });
    const noFinding = await createAction({ entity_id: ctx.company.id, object_type: "trend" });
    expect(noFinding.body.detail[0]).toMatchObject({ loc: ["body", "insight_id"], type: "missing" });
  });
});

describe("GET and PATCH /api/sweeps/objects", () => {
  it("lists open and acting actions with filters and next_offset, and changes their status with revisions", async () => {
    const all = await list(`entity_id=${ctx.company.id}`);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({
      entity_id: ctx.company.id,
      mode: "actions",
      statuses: ["open", "acting"],
      count: 2,
      total: 2,
      next_offset: null,
      basis: expect.stringMatching(/not approved decisions/),
    });
    expect(all.body.object_types).toHaveLength(10);
    const [first, second] = all.body.objects;
    const page = await list(`entity_id=${ctx.company.id}&limit=1`);
    expect(page.body).toMatchObject({ count: 1, total: 2, next_offset: 1, objects: [{ id: first.id }] });
    const next = await list(`entity_id=${ctx.company.id}&limit=1&offset=1`);
    expect(next.body).toMatchObject({ count: 1, next_offset: null, objects: [{ id: second.id }] });
    const typed = await list(`entity_id=${ctx.company.id}&object_type=feature_request`);
    expect(typed.body).toMatchObject({ object_types: ["feature_request"], objects: [{ id: second.id }] });

    const acting = await patch(first.id, { status: "acting" });
    expect(acting.status).toBe(200);
    expect(acting.body).toMatchObject({ status: "acting", revision: 2, urgency: "high" });
    const stale = await patch(first.id, { status: "done", expected_revision: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ code: "conflict", current_revision: 2 });
    const same = await patch(first.id, { status: "acting" });
    expect(same.body.revision).toBe(2);
    const empty = await patch(first.id, {});
    expect(empty.status).toBe(422);
    expect(empty.body.detail[0]).toMatchObject({ loc: ["body"] });

    await patch(second.id, { status: "dismissed", expected_revision: 1 }).expect(200);
    const open = await list(`entity_id=${ctx.company.id}`);
    expect(open.body.objects.map((o: { id: string }) => o.id)).toEqual([first.id]);
    const dismissed = await list(`entity_id=${ctx.company.id}&status=dismissed`);
    expect(dismissed.body.objects.map((o: { id: string }) => o.id)).toEqual([second.id]);
    expect((await h.http.get(`/api/sweeps/objects/${first.id}`).set(bearer(token))).body).toMatchObject({ id: first.id, status: "acting" });
    expect((await list(`entity_id=${ctx.company.id}&limit=0`)).status).toBe(422);
    expect((await list(`entity_id=${ctx.company.id}&status=closed`)).status).toBe(422);
  });

  it("keeps an action on the finding revision it came from when the finding is revised, and shows originals that are gone", async () => {
    const revised = await h.http
      .put(`/agent/v1/knowledge/insights/${insightId}`)
      .set(bearer(token))
      .send(finding(1, [{ content_id: contentIds[1] as string, quote: QUOTE_B }], "Exports time out"));
    expect(revised.status, JSON.stringify(revised.body)).toBe(200);
    const actions = await list(`entity_id=${ctx.company.id}&status=acting`);
    expect(actions.body.objects[0]).toMatchObject({
      knowledge_ref: { revision: 1, current_revision: 2, title: "Exports time out" },
      signal_count: 2,
    });
    const fromNew = await createAction({ entity_id: ctx.company.id, insight_id: insightId, object_type: "pain_point" });
    expect(fromNew.status).toBe(201);
    expect(fromNew.body).toMatchObject({ title: "Exports time out", knowledge_ref: { revision: 2 }, signal_count: 1 });

    await h.deps.db.$executeRaw`DELETE FROM content_store WHERE id = ${contentIds[0]}::uuid`;
    const after = await h.http.get(`/api/sweeps/objects/${actions.body.objects[0].id}`).set(bearer(token));
    expect(after.body.evidence[0]).toMatchObject({ content_id: contentIds[0], quote: QUOTE_A, available: false });
    expect(after.body.evidence[1]).toMatchObject({ available: true });
  });

  it("answers 404 to non-members, lets viewers read but not write, and takes a bearer or a * key", async () => {
    const { objects } = (await list(`entity_id=${ctx.company.id}&status=acting`)).body;
    const id = objects[0].id as string;
    const stranger = await h.token();
    expect((await list(`entity_id=${ctx.company.id}`, bearer(stranger))).status).toBe(404);
    expect((await patch(id, { status: "done" }, bearer(stranger))).status).toBe(404);
    expect((await h.http.get(`/api/sweeps/objects/${id}`).set(bearer(stranger))).status).toBe(404);
    expect((await createAction({ entity_id: ctx.company.id, insight_id: insightId, object_type: "hook" }, bearer(stranger))).status).toBe(
      404,
    );
    expect((await patch("not-a-uuid", { status: "done" })).status).toBe(404);

    const viewer = await h.token();
    await h.http.get("/agent/v1/connection").set(bearer(viewer)).expect(200);
    const viewerUser = (await h.deps.db.user.findMany({ orderBy: { createdAt: "desc" }, take: 1 }))[0];
    await h.deps.db.workspaceMember.create({ data: { workspaceId: ctx.workspace_id, userId: viewerUser?.id as string, role: "viewer" } });
    expect((await list(`entity_id=${ctx.company.id}&status=acting`, bearer(viewer))).body.objects[0].id).toBe(id);
    const refused = await patch(id, { status: "done" }, bearer(viewer));
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("forbidden");
    expect((await createAction({ entity_id: ctx.company.id, insight_id: insightId, object_type: "hook" }, bearer(viewer))).status).toBe(
      403,
    );

    const star = await createKeyFor(h, token, ["*"]);
    const ingest = await createKeyFor(h, token, ["ingest"]);
    expect((await list(`entity_id=${ctx.company.id}`, { "X-API-Key": star.raw_key })).status).toBe(200);
    expect((await list(`entity_id=${ctx.company.id}`, { "X-API-Key": ingest.raw_key })).status).toBe(403);
  });
});

describe("action plans", () => {
  it("takes a plan of up to 20,000 characters of JSON and refuses a larger one at the field", async () => {
    const base = { entity_id: ctx.company.id, insight_id: insightId, object_type: "workflow" };
    const big = await createAction({ ...base, action_plan: { steps: ["x".repeat(20_000)] } });
    expect(big.status).toBe(422);
    expect(big.body.detail[0]).toMatchObject({ loc: ["body", "action_plan"], type: "too_long" });
    const fits = await createAction({ ...base, action_plan: { steps: ["x".repeat(19_000)] } });
    expect(fits.status).toBe(201);
  });
});
