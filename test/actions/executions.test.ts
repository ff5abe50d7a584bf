import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, signIn } from "../helpers/evidence.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { connect, ok, refused } from "../mcp/support.js";

/**
 * Action executions (/api/sweeps/objects/{object_id}/executions, /api/sweeps/executions/{execution_id}):
 * an approved handoff of an action, its reported outcome and an owner's review, over HTTP, over MCP,
 * and through the reference agent client (`@crowdlisten/harness` 2.2.3, unchanged: its `ingest`
 * destination "execution" and its reviewed-execution training converter). The client reads its
 * base URL once, when its module loads.
 */
type HandleV2Tool = (sb: unknown, userId: string, name: string, args: Record<string, unknown>, accessToken: string) => Promise<string>;
type TrainingExport = (
  input: unknown,
  options: { approvedExecutionIds: Iterable<string>; trainingScope: "internal_harness" | "external_harness" | "fine_tuning" },
) => {
  examples: { messages: { role: string; content: string }[]; metadata: Record<string, unknown> }[];
  skipped: { reason: string }[];
  stats: { received: number; exported: number; skipped: number };
};

let h: Harness;
let server: Server;
let baseUrl: string;
let handleV2Tool: HandleV2Tool;
let buildReviewedExecutionTrainingExport: TrainingExport;
let owner: string;
let member: string;
let viewer: string;
let stranger: string;
let ownerId: string;
let memberId: string;
let ctx: { workspace_id: string; company: { id: string } };
let actionId: string;
let dismissedActionId: string;

const STEPS = ["Prepare the approved segment", "Draft, but do not send, the outreach"];

const create = (body: Record<string, unknown>, token = member, action = actionId) =>
  h.http.post(`/api/sweeps/objects/${action}/executions`).set(bearer(token)).send(body);
const patch = (id: string, body: Record<string, unknown>, token = member) =>
  h.http.patch(`/api/sweeps/executions/${id}`).set(bearer(token)).send(body);
const get = (id: string, token = member) => h.http.get(`/api/sweeps/executions/${id}`).set(bearer(token));
const list = (query = "", token = member, action = actionId) =>
  h.http.get(`/api/sweeps/objects/${action}/executions${query ? `?${query}` : ""}`).set(bearer(token));
const approved = (steps: string[] = STEPS) => ({ executor_platform: "codex", approved_for_execution: true, steps });

async function newExecution(steps: string[] = STEPS): Promise<string> {
  const res = await create(approved(steps));
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

/** A user signed in, added to the workspace with `role`. */
async function joined(role: string): Promise<{ token: string; id: string }> {
  const sub = randomId("user-");
  const token = await h.token(sub);
  await signIn(h, token);
  const user = await h.deps.db.user.findUniqueOrThrow({ where: { sub } });
  await h.deps.db.workspaceMember.create({ data: { workspaceId: ctx.workspace_id, userId: user.id, role } });
  return { token, id: user.id };
}

/** The client's answer; a refusal is an Error whose message is its JSON report ({error, status, …}). */
const call = async (token: string, args: Record<string, unknown>) =>
  JSON.parse(await handleV2Tool(null, "user", "ingest", { destination: "execution", ...args }, token));
const clientRefusal = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("the call succeeded");
    },
    (err: Error) => JSON.parse(err.message) as { status: number; error: string },
  );

beforeAll(async () => {
  h = await createHarness();
  server = h.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.CROWDLISTEN_AGENT_URL = baseUrl;
  ({ handleV2Tool } = (await import("@crowdlisten/harness/dist/harness-v2.js")) as unknown as { handleV2Tool: HandleV2Tool });
  ({ buildReviewedExecutionTrainingExport } = (await import("@crowdlisten/harness/dist/action-training-export.js")) as unknown as {
    buildReviewedExecutionTrainingExport: TrainingExport;
  });

  const ownerSub = randomId("owner-");
  owner = await h.token(ownerSub);
  const onboarded = await h.http
    .post("/api/entities/onboarding")
    .set(bearer(owner))
    .send({ request_id: randomUUID(), company: { name: "Acme Notes" } })
    .expect(201);
  ctx = onboarded.body;
  ownerId = (await h.deps.db.user.findUniqueOrThrow({ where: { sub: ownerSub } })).id;
  const ingested = await h.http
    .post("/agent/v1/ingest/content")
    .set(bearer(owner))
    .send({ entity_id: ctx.company.id, sources: [{ id: "a", platform: "reddit", content: "The export to CSV fails every time." }] })
    .expect(200);
  const finding = await h.http
    .post("/agent/v1/knowledge/insights")
    .set(bearer(owner))
    .send({
      entity_id: ctx.company.id,
      request_id: randomUUID(),
      expected_revision: 0,
      title: "Exports fail",
      summary: "Teams report that exporting fails.",
      evidence: [{ content_id: ingested.body.content_ids[0], quote: "The export to CSV fails every time" }],
    });
  expect(finding.status, JSON.stringify(finding.body)).toBe(201);
  const action = async (object_type: string, status = "open") => {
    const res = await h.http
      .post("/api/sweeps/objects")
      .set(bearer(owner))
      .send({ entity_id: ctx.company.id, insight_id: finding.body.record.id, object_type, status });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };
  actionId = await action("workflow", "acting");
  dismissedActionId = await action("hook", "dismissed");

  ({ token: member, id: memberId } = await joined("editor"));
  ({ token: viewer } = await joined("viewer"));
  stranger = await h.token();
  await signIn(h, stranger);
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await h.close();
});

describe("POST /api/sweeps/objects/{object_id}/executions", () => {
  it("records the approved steps with who approved them; status approved, nothing reported or reviewed yet", async () => {
    const res = await create({
      executor_platform: " codex ",
      approved_for_execution: true,
      steps: [" Prepare the approved segment ", STEPS[1]],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      action_id: actionId,
      entity_id: ctx.company.id,
      workspace_id: ctx.workspace_id,
      executor_platform: "codex",
      approved_for_execution: true,
      approved_by: memberId,
      steps: STEPS,
      status: "approved",
      step_results: [],
      outcome_summary: null,
      metrics: {},
      review_status: "pending",
      reviewed_by: null,
      reviewed_at: null,
      training_scopes: [],
      revision: 1,
      created_by: memberId,
      updated_by: memberId,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      finished_at: null,
    });
    // No idempotency key: the same request again is a second execution.
    const again = await create({ executor_platform: "codex", approved_for_execution: true, steps: STEPS });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(res.body.id);
    const action = await h.http.get(`/api/sweeps/objects/${actionId}`).set(bearer(member));
    expect(action.body).toMatchObject({ status: "acting", revision: 1 });
  });

  it("refuses an execution without explicit approval, and bad steps, in the 422 shape", async () => {
    const unapproved = await create({ executor_platform: "codex", approved_for_execution: false, steps: STEPS });
    expect(unapproved.status).toBe(422);
    expect(unapproved.body.detail).toEqual([
      { loc: ["body", "approved_for_execution"], msg: "Input should be 'true'", type: "literal_error" },
    ]);
    const missing = await create({ executor_platform: "codex", steps: STEPS });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toEqual([
      { loc: ["body", "approved_for_execution"], msg: "Input should be 'true'", type: "literal_error" },
    ]);
    expect((await create({ ...approved(), approved_for_execution: "true" })).status).toBe(422);
    const noSteps = await create(approved([]));
    expect(noSteps.body.detail[0]).toMatchObject({ loc: ["body", "steps"], type: "too_short" });
    const many = await create(approved(Array.from({ length: 51 }, (_, i) => `Step ${i}`)));
    expect(many.body.detail[0]).toMatchObject({ loc: ["body", "steps"], type: "too_long" });
    expect((await create(approved(Array.from({ length: 50 }, (_, i) => `Step ${i}`)))).status).toBe(201);
    const long = await create(approved(["x".repeat(2001)]));
    expect(long.body.detail[0]).toMatchObject({ loc: ["body", "steps", 0], type: "string_too_long" });
    const blank = await create(approved(["  "]));
    expect(blank.body.detail[0]).toMatchObject({ loc: ["body", "steps", 0], type: "string_too_short" });
    const platform = await create({ ...approved(), executor_platform: "p".repeat(101) });
    expect(platform.body.detail[0]).toMatchObject({ loc: ["body", "executor_platform"], type: "string_too_long" });
  });

  it("refuses a dismissed action with 409", async () => {
    const res = await create(approved(), member, dismissedActionId);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: "conflict", action_status: "dismissed" });
  });
});

describe("PATCH /api/sweeps/executions/{execution_id}: status and report", () => {
  it("moves forward, takes step results by text, index or position, and keeps a final status final", async () => {
    const id = await newExecution();
    const running = await patch(id, { status: "running" });
    expect(running.status, JSON.stringify(running.body)).toBe(200);
    expect(running.body).toMatchObject({ status: "running", revision: 2, finished_at: null });
    expect((await patch(id, { status: "running" })).body.revision).toBe(2);
    const back = await patch(id, { status: "approved" });
    expect(back.status).toBe(409);
    expect(back.body).toMatchObject({ code: "conflict", status: "running", current_revision: 2 });

    const reported = await patch(id, {
      step_results: [
        { step: "draft, but do not send,   the OUTREACH", status: "skipped", result: "Held for legal review" },
        { step: 0, status: "completed", summary: "Prepared 12 accounts" },
      ],
      outcome_summary: "  The segment was prepared; no message was sent. ",
      metrics: { accounts_prepared: 12, messages_sent: 0, on_time: true, "conversion.rate": 0.25 },
    });
    expect(reported.status, JSON.stringify(reported.body)).toBe(200);
    expect(reported.body).toMatchObject({
      status: "running",
      step_results: [
        { step_index: 0, step: STEPS[0], status: "completed", summary: "Prepared 12 accounts" },
        { step_index: 1, step: STEPS[1], status: "skipped", summary: "Held for legal review" },
      ],
      outcome_summary: "The segment was prepared; no message was sent.",
      metrics: { accounts_prepared: 12, messages_sent: 0, on_time: true, "conversion.rate": 0.25 },
      revision: 3,
    });
    const byPosition = await patch(id, { step_results: [{ status: "completed" }, { status: "failed", summary: "Bounced" }] });
    expect(byPosition.body.step_results).toEqual([
      { step_index: 0, step: STEPS[0], status: "completed", summary: null },
      { step_index: 1, step: STEPS[1], status: "failed", summary: "Bounced" },
    ]);

    const done = await patch(id, { status: "completed" });
    expect(done.body).toMatchObject({ status: "completed", finished_at: expect.any(String), revision: 5 });
    expect(done.body.updated_at > done.body.created_at).toBe(true);
    for (const status of ["running", "cancelled", "failed", "approved"]) {
      const refused = await patch(id, { status });
      expect(refused.status, status).toBe(409);
      expect(refused.body).toMatchObject({ code: "conflict", status: "completed", detail: expect.stringMatching(/final/) });
    }
    // The same final status again changes nothing; the report may still change until it is reviewed.
    expect((await patch(id, { status: "completed" })).body.revision).toBe(5);
    const amended = await patch(id, { metrics: { accounts_prepared: 12 } });
    expect(amended.body).toMatchObject({ metrics: { accounts_prepared: 12 }, revision: 6 });

    const skipped = await newExecution();
    const cancelled = await patch(skipped, { status: "cancelled" });
    expect(cancelled.body).toMatchObject({ status: "cancelled", finished_at: expect.any(String) });
    expect((await patch(skipped, { status: "running" })).status).toBe(409);
  });

  it("refuses text, nesting and too many metrics, step results that name no step, and an empty change, with 422", async () => {
    const id = await newExecution();
    const text = await patch(id, { metrics: { accounts: "12", nested: { a: 1 }, list: [1], ok: 1 } });
    expect(text.status).toBe(422);
    expect(text.body.detail).toEqual([
      { loc: ["body", "metrics", "accounts"], msg: expect.stringMatching(/number or a boolean/), type: "union_error" },
      { loc: ["body", "metrics", "nested"], msg: expect.stringMatching(/number or a boolean/), type: "union_error" },
      { loc: ["body", "metrics", "list"], msg: expect.stringMatching(/number or a boolean/), type: "union_error" },
    ]);
    const many = await patch(id, { metrics: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`m${i}`, i])) });
    expect(many.body.detail).toEqual([{ loc: ["body", "metrics"], msg: "Give at most 50 metrics", type: "too_long" }]);
    const name = await patch(id, { metrics: { "1st": 1, "with space": 2 } });
    expect(name.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ["body", "metrics", "1st"],
      ["body", "metrics", "with space"],
    ]);
    expect((await patch(id, { metrics: "12" })).status).toBe(422);

    const unknownStep = await patch(id, { step_results: [{ step: "Send the outreach", status: "completed" }] });
    expect(unknownStep.status).toBe(422);
    expect(unknownStep.body.detail).toEqual([{ loc: ["body", "step_results", 0, "step"], msg: expect.any(String), type: "value_error" }]);
    const outOfRange = await patch(id, { step_results: [{ step: 2, status: "completed" }] });
    expect(outOfRange.body.detail[0]).toMatchObject({ loc: ["body", "step_results", 0, "step"], msg: expect.stringMatching(/2 step/) });
    const twice = await patch(id, {
      step_results: [
        { step: 0, status: "completed" },
        { step: STEPS[0], status: "failed" },
      ],
    });
    expect(twice.body.detail[0]).toMatchObject({ loc: ["body", "step_results", 1, "step"], msg: expect.stringMatching(/once/) });
    const both = await patch(id, { step_results: [{ step: 0, status: "completed", summary: "a", result: "b" }] });
    expect(both.body.detail[0]).toMatchObject({ loc: ["body", "step_results", 0, "result"] });
    const badStatus = await patch(id, { step_results: [{ step: 0, status: "done" }] });
    expect(badStatus.body.detail[0]).toMatchObject({ loc: ["body", "step_results", 0, "status"], type: "enum" });
    const long = await patch(id, { outcome_summary: "x".repeat(4001) });
    expect(long.body.detail[0]).toMatchObject({ loc: ["body", "outcome_summary"], type: "string_too_long" });
    const empty = await patch(id, {});
    expect(empty.status).toBe(422);
    expect(empty.body.detail[0]).toMatchObject({ loc: ["body"] });
    expect((await patch(id, { status: "finished" })).body.detail[0]).toMatchObject({ loc: ["body", "status"], type: "enum" });
    expect((await get(id)).body.revision).toBe(1);
  });

  it("applies one of two concurrent final statuses and refuses the other; expected_revision guards a change", async () => {
    const id = await newExecution();
    await patch(id, { status: "running" }).expect(200);
    const answers = await Promise.all([patch(id, { status: "completed" }), patch(id, { status: "cancelled" })]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const final = (await get(id)).body;
    expect(final.revision).toBe(3);
    expect(final.status).toBe(answers.find((a) => a.status === 200)?.body.status);

    const other = await newExecution();
    const stale = await patch(other, { status: "running", expected_revision: 2 });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ code: "conflict", current_revision: 1 });
    expect((await patch(other, { status: "running", expected_revision: 1 })).body.revision).toBe(2);
  });
});

describe("reviews", () => {
  it("are an owner's, of a completed or failed execution; scopes need an approved review; a reviewed report is frozen", async () => {
    const id = await newExecution();
    const early = await patch(id, { review_status: "approved" }, owner);
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({ code: "conflict", detail: expect.stringMatching(/completed or failed/) });
    await patch(id, { status: "completed", outcome_summary: "Prepared 12 accounts." }).expect(200);

    for (const body of [{ review_status: "approved" }, { training_scopes: [] }]) {
      const byMember = await patch(id, body);
      expect(byMember.status).toBe(403);
      expect(byMember.body).toMatchObject({ code: "forbidden", detail: expect.stringMatching(/owner or admin/) });
    }
    const noReview = await patch(id, { training_scopes: ["internal_harness"] }, owner);
    expect(noReview.status).toBe(409);
    expect(noReview.body.detail).toMatch(/approved review/);

    const reviewed = await patch(
      id,
      { review_status: "approved", training_scopes: ["fine_tuning", "internal_harness", "fine_tuning"] },
      owner,
    );
    expect(reviewed.status, JSON.stringify(reviewed.body)).toBe(200);
    expect(reviewed.body).toMatchObject({
      review_status: "approved",
      reviewed_by: ownerId,
      reviewed_at: expect.any(String),
      training_scopes: ["internal_harness", "fine_tuning"],
      updated_by: ownerId,
    });
    // Scopes later, by themselves, once approved.
    const widened = await patch(id, { training_scopes: ["internal_harness", "external_harness", "fine_tuning"] }, owner);
    expect(widened.body.training_scopes).toEqual(["internal_harness", "external_harness", "fine_tuning"]);
    const repeat = await patch(id, { review_status: "approved" }, owner);
    expect(repeat.body.revision).toBe(widened.body.revision);

    const amended = await patch(id, { outcome_summary: "Prepared 13 accounts." });
    expect(amended.status).toBe(409);
    expect(amended.body.detail).toMatch(/review decision/);
    const reapproved = await patch(id, { outcome_summary: "Prepared 13 accounts.", review_status: "approved" }, owner);
    expect(reapproved.body).toMatchObject({
      outcome_summary: "Prepared 13 accounts.",
      review_status: "approved",
      revision: widened.body.revision + 1,
    });

    // A rejection withdraws the scopes; reopening the review (pending) unfreezes the report.
    const rejected = await patch(id, { review_status: "rejected" }, owner);
    expect(rejected.body).toMatchObject({ review_status: "rejected", training_scopes: [], reviewed_by: ownerId });
    const reopened = await patch(id, { review_status: "pending" }, owner);
    expect(reopened.body).toMatchObject({ review_status: "pending", reviewed_by: null, reviewed_at: null });
    expect((await patch(id, { outcome_summary: "Prepared 14 accounts." })).status).toBe(200);

    const cancelled = await newExecution();
    await patch(cancelled, { status: "cancelled" }).expect(200);
    expect((await patch(cancelled, { review_status: "approved" }, owner)).status).toBe(409);
    const failed = await newExecution();
    await patch(failed, { status: "failed", outcome_summary: "The CRM export timed out." }).expect(200);
    expect((await patch(failed, { review_status: "rejected" }, owner)).body.review_status).toBe("rejected");
  });

  it("an admin reviews too; an owner may finish and review in one request", async () => {
    const admin = await joined("admin");
    const id = await newExecution();
    await patch(id, { status: "completed", outcome_summary: "Done." }).expect(200);
    expect((await patch(id, { review_status: "approved" }, admin.token)).body).toMatchObject({ reviewed_by: admin.id });

    const own = await newExecution();
    const once = await patch(
      own,
      { status: "completed", outcome_summary: "Done.", review_status: "approved", training_scopes: ["internal_harness"] },
      owner,
    );
    expect(once.body).toMatchObject({ status: "completed", review_status: "approved", training_scopes: ["internal_harness"] });
  });
});

describe("reading, listing and tenancy", () => {
  it("lists an action's executions oldest first with filters and next_offset, and reads one", async () => {
    const all = await list("limit=200");
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({
      action_id: actionId,
      offset: 0,
      limit: 200,
      next_offset: null,
      basis: expect.stringMatching(/as reported/),
    });
    expect(all.body.count).toBe(all.body.total);
    const created = all.body.executions.map((e: { created_at: string }) => e.created_at);
    expect([...created].sort()).toEqual(created);
    const page = await list("limit=1&offset=1");
    expect(page.body).toMatchObject({ count: 1, next_offset: 2, executions: [{ id: all.body.executions[1].id }] });
    const cancelled = await list("status=cancelled");
    expect(cancelled.body.executions.length).toBeGreaterThan(0);
    expect(cancelled.body.executions.every((e: { status: string }) => e.status === "cancelled")).toBe(true);
    const rejected = await list("review_status=rejected", viewer);
    expect(rejected.body.executions.every((e: { review_status: string }) => e.review_status === "rejected")).toBe(true);
    const one = await get(all.body.executions[0].id, viewer);
    expect(one.body).toEqual(all.body.executions[0]);
    expect((await list("limit=0")).status).toBe(422);
    expect((await list("status=done")).status).toBe(422);
    expect((await list("", member, dismissedActionId)).body).toMatchObject({ executions: [], total: 0 });
  });

  it("answers 404 to non-members, lets viewers read but not write", async () => {
    const id = await newExecution();
    expect((await get(id, stranger)).status).toBe(404);
    expect((await patch(id, { status: "running" }, stranger)).body).toMatchObject({
      code: "not_found",
      detail: "Execution was not found.",
    });
    expect((await list("", stranger)).status).toBe(404);
    expect((await create(approved(), stranger)).body).toMatchObject({ code: "not_found", detail: "Action was not found." });
    expect((await get(randomUUID())).status).toBe(404);
    expect((await get("not-a-uuid")).status).toBe(404);
    expect((await create(approved(), member, randomUUID())).status).toBe(404);

    expect((await get(id, viewer)).status).toBe(200);
    const refused = await patch(id, { status: "running" }, viewer);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("forbidden");
    expect((await create(approved(), viewer)).status).toBe(403);
    expect((await get(id)).body.revision).toBe(1);
  });
});

describe("the interface description", () => {
  it("lists the execution routes in /openapi.json with their schemas", async () => {
    const doc = (await h.http.get("/openapi.json")).body;
    const byAction = doc.paths["/api/sweeps/objects/{object_id}/executions"];
    const one = doc.paths["/api/sweeps/executions/{execution_id}"];
    expect(Object.keys(byAction ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(one ?? {}).sort()).toEqual(["get", "patch"]);
    expect(JSON.stringify(byAction.post.requestBody)).toContain("approved_for_execution");
    expect(JSON.stringify(one.patch.requestBody)).toContain("internal_harness");
  });
});

describe("over MCP (ingest destination execution)", () => {
  it("creates and updates through the same routes, in the reference client's wrapper", async () => {
    const { client, close } = await connect(baseUrl, { bearer: member });
    try {
      const created = await ok(client, "ingest", { destination: "execution", ...approved(), action_id: actionId });
      expect(created).toMatchObject({
        recorded: true,
        destination: "execution",
        operation: "created",
        action_id: actionId,
        execution: { status: "approved", steps: STEPS, approved_by: memberId },
      });
      const id = (created.execution as { id: string }).id;
      const updated = await ok(client, "ingest", {
        destination: "execution",
        execution_id: id,
        execution_status: "completed",
        step_results: [{ step: STEPS[0], status: "completed", result: "Prepared 12 accounts" }],
        metrics: { accounts_prepared: 12 },
      });
      expect(updated).toMatchObject({
        operation: "updated",
        execution_id: id,
        execution: { status: "completed", step_results: [{ step_index: 0, summary: "Prepared 12 accounts" }] },
      });
      expect(await refused(client, "ingest", { destination: "execution", execution_id: id, review_status: "approved" })).toMatchObject({
        status: 403,
        code: "forbidden",
      });
      expect(await refused(client, "ingest", { destination: "execution", execution_id: id, metrics: { a: "x" } })).toMatchObject({
        status: 422,
        detail: [{ loc: ["body", "metrics", "a"] }],
      });
      expect(await refused(client, "ingest", { destination: "execution", ...approved() })).toMatchObject({
        status: 422,
        detail: [{ loc: ["arguments", "action_id"], type: "missing" }],
      });
      expect(await refused(client, "ingest", { destination: "execution", ...approved(), action_id: randomUUID() })).toMatchObject({
        status: 404,
        code: "not_found",
      });
    } finally {
      await close();
    }
  });
});

describe("the reference agent client (ingest destination execution) and its training converter", () => {
  it("creates, completes, and after an owner's review yields one reviewed-execution example", async () => {
    const created = await call(member, { action_id: actionId, executor_platform: "codex", approved_for_execution: true, steps: STEPS });
    expect(created).toMatchObject({
      recorded: true,
      destination: "execution",
      operation: "created",
      action_id: actionId,
      execution: { status: "approved", steps: STEPS, review_status: "pending" },
    });
    const id = created.execution.id as string;

    const completed = await call(member, {
      execution_id: id,
      execution_status: "completed",
      step_results: [
        { step: STEPS[0], status: "completed", result: "Prepared 12 accounts" },
        { step: STEPS[1], status: "completed", result: "Drafted the outreach; nothing was sent" },
      ],
      outcome_summary: "The segment was prepared; no message was sent.",
      metrics: { accounts_prepared: 12, messages_sent: 0 },
    });
    expect(completed).toMatchObject({ operation: "updated", execution_id: id, execution: { status: "completed", revision: 2 } });
    const options = { approvedExecutionIds: [id], trainingScope: "internal_harness" as const };
    expect(buildReviewedExecutionTrainingExport(completed, options).skipped).toEqual([
      expect.objectContaining({ reason: "not_owner_approved" }),
    ]);

    // The member may not review; the owner does, through the same client.
    const notOwner = await clientRefusal(
      call(member, { execution_id: id, review_status: "approved", training_scopes: ["internal_harness"] }),
    );
    expect(notOwner.status).toBe(403);
    const reviewed = await call(owner, { execution_id: id, review_status: "approved", training_scopes: ["internal_harness"] });
    expect(reviewed.execution).toMatchObject({ review_status: "approved", reviewed_by: ownerId, training_scopes: ["internal_harness"] });

    const report = buildReviewedExecutionTrainingExport(reviewed, options);
    expect(report.stats).toEqual({ received: 1, exported: 1, skipped: 0 });
    const [example] = report.examples;
    expect(example?.metadata).toMatchObject({
      record_type: "reviewed_execution_outcome",
      status: "completed",
      review_status: "approved",
      training_scope: "internal_harness",
      executor_platform: "codex",
      step_count: 2,
      result_count: 2,
      metric_names: ["accounts_prepared", "messages_sent"],
    });
    expect(example?.messages[1]?.content).toBe(`Execute this approved workflow:\n1. ${STEPS[0]}\n2. ${STEPS[1]}`);
    expect(example?.messages[2]?.content).toContain("1. [completed] Prepared 12 accounts");
    expect(example?.messages[2]?.content).toContain("## Observed outcome\nThe segment was prepared; no message was sent.");
    expect(example?.messages[2]?.content).toContain("- accounts_prepared: 12");
    // Another scope was not granted; the list answer converts as it is.
    expect(buildReviewedExecutionTrainingExport(reviewed, { ...options, trainingScope: "fine_tuning" }).stats.exported).toBe(0);
    const listed = (await list("review_status=approved&limit=200")).body;
    expect(buildReviewedExecutionTrainingExport(listed, options).stats.exported).toBe(1);

    // The client's own checks, and the service's refusals as the client reports them.
    expect(await call(member, { action_id: actionId, executor_platform: "codex", steps: STEPS })).toEqual({
      error: "approved_for_execution must explicitly be true to create an execution",
    });
    const final = await clientRefusal(call(member, { execution_id: id, execution_status: "running" }));
    expect(final.status).toBe(409);
    const foreign = await clientRefusal(call(stranger, { execution_id: id, execution_status: "running" }));
    expect(foreign.status).toBe(404);
  });
});
