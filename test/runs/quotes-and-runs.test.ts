import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { estimate, PRICE_TABLE, runScope } from "../../src/workflows/billing/pricing.js";
import { SKELETON_WORKFLOW } from "../../src/workflows/onboarding/schemas.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { expectAllLedgersConsistent, expectLedgerConsistent, onboardCompany } from "./helpers.js";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterEach(() => expectAllLedgersConsistent(h));
afterAll(() => h.close());

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

describe("skills", () => {
  it("lists the saved workflows created by onboarding, with the skeleton defaults", async () => {
    const { skills } = await onboardCompany(h);
    expect(skills).toHaveLength(2);
    expect(skills[0]).toMatchObject({
      objective_id: "obj-1",
      name: "Objective 1",
      instructions: "",
      revision: 1,
      inputs: { lookback_days: 7, max_sources: 25, x_min_likes: 500000, platforms: [] },
      model_routing: { cost_tier: "medium", allowed_models: [] },
    });
  });

  it("replaces the set under an optimistic check, bumping the revision of changed skills", async () => {
    const { token, entityId, skills } = await onboardCompany(h);
    const expected = skills.map((s) => ({ id: s.id, revision: s.revision }));
    const res = await h.http
      .put(`/api/entities/${entityId}/skills`)
      .set(auth(token))
      .send({
        expected_skills: expected,
        skills: [
          { skill_id: skills[0]!.id, title: "Objective 1", question: "What do developers say about Acme feature 1?" },
          { skill_id: skills[1]!.id, title: "Renamed", question: "Changed?" },
          { title: "Brand new", workflow: { inputs: { max_sources: 10 } } },
        ],
      });
    expect(res.status).toBe(200);
    expect(res.body.skills.map((s: { name: string; revision: number }) => [s.name, s.revision])).toEqual([
      ["Objective 1", 1],
      ["Renamed", 2],
      ["Brand new", 1],
    ]);
    expect(res.body.skills[2].inputs.max_sources).toBe(10);

    const stale = await h.http.put(`/api/entities/${entityId}/skills`).set(auth(token)).send({ expected_skills: expected, skills: [] });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe("conflict");
    expect(stale.body.current_skills).toHaveLength(3);
    const after = await h.http.get(`/api/entities/${entityId}/skills`).set(auth(token));
    expect(after.body.count).toBe(3);
  });

  it("refuses more than five skills, and two different ids for one skill", async () => {
    const { token, entityId, skills } = await onboardCompany(h);
    const expected = skills.map((s) => ({ id: s.id, revision: s.revision }));
    const six = Array.from({ length: 6 }, (_, i) => ({ title: `s${i}` }));
    const tooMany = await h.http.put(`/api/entities/${entityId}/skills`).set(auth(token)).send({ expected_skills: expected, skills: six });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail[0]).toMatchObject({ loc: ["body", "skills"], type: "too_long" });
    const unknown = await h.http
      .put(`/api/entities/${entityId}/skills`)
      .set(auth(token))
      .send({ expected_skills: expected, skills: [{ id: "brand-new", skill_id: "other", title: "x" }] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]).toMatchObject({ loc: ["body", "skills", 0, "skill_id"] });
  });

  it("hides another user's entity behind 404", async () => {
    const { entityId } = await onboardCompany(h);
    const res = await h.http.get(`/api/entities/${entityId}/skills`).set(auth(await h.token()));
    expect(res.status).toBe(404);
  });
});

describe("quotes", () => {
  it("prices a run from the workflow's inputs by the documented table", async () => {
    const { token, entityId, skills } = await onboardCompany(h, { platforms: ["hackernews", "reddit"] });
    const res = await h.http.get(`/api/entities/${entityId}/skills/${skills[0]!.id}/quote?source_mode=refresh`).set(auth(token));
    expect(res.status).toBe(200);
    const scope = runScope(
      { key: skills[0]!.id, revision: 1, entityId, question: "What do developers say about Acme feature 1?", title: "Objective 1" },
      SKELETON_WORKFLOW,
      ["hackernews", "reddit"],
      "refresh",
    );
    const expected = estimate(scope);
    // base 5 + collection (2 platforms × 10 + 25 sources × 0.5) + analysis 25 × 0.2, medium tier, brief.
    expect(expected.estimated).toBe(Math.ceil(PRICE_TABLE.base + 2 * 10 + 25 * 0.5 + 25 * 0.2));
    expect(res.body).toMatchObject({
      skill_id: skills[0]!.id,
      source_mode: "refresh",
      estimated_credits: expected.estimated,
      max_charge_credits: expected.maximum,
    });
    expect(res.body.scope_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(res.body.expires_at)).toBeGreaterThan(Date.now());
    expect(res.body.breakdown.platforms).toBe(2);

    const saved = await h.http.get(`/api/entities/${entityId}/skills/${skills[0]!.id}/quote?source_mode=saved`).set(auth(token));
    expect(saved.body.estimated_credits).toBeLessThan(res.body.estimated_credits);
    expect(saved.body.scope_hash).not.toBe(res.body.scope_hash);
    const again = await h.http.get(`/api/entities/${entityId}/skills/${skills[0]!.id}/quote?source_mode=refresh`).set(auth(token));
    expect(again.body.scope_hash).toBe(res.body.scope_hash);
    const bad = await h.http.get(`/api/entities/${entityId}/skills/${skills[0]!.id}/quote?source_mode=sometimes`).set(auth(token));
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["query", "source_mode"]);
  });
});

describe("runs: approval and refusals", () => {
  async function quoted(credits = 1000) {
    const ctx = await onboardCompany(h, { credits });
    const skillId = ctx.skills[0]!.id;
    const quote = await h.http.get(`/api/entities/${ctx.entityId}/skills/${skillId}/quote?source_mode=saved`).set(auth(ctx.token));
    const run = (body: object, key = randomId("run-key-")) =>
      h.http.post(`/api/entities/${ctx.entityId}/skills/${skillId}/runs`).set(auth(ctx.token)).set("Idempotency-Key", key).send(body);
    return { ...ctx, skillId, quote: quote.body, run };
  }

  it("accepts an approved quote, reserves the maximum and queues the run", async () => {
    const q = await quoted();
    const res = await q.run({ scope_hash: q.quote.scope_hash, max_charge_credits: q.quote.max_charge_credits });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: "queued",
      source_mode: "saved",
      max_charge_credits: q.quote.max_charge_credits,
      charged_credits: 0,
    });
    const credits = await h.http.get(`/api/workspaces/${q.workspaceId}/credits`).set(auth(q.token));
    expect(credits.body.balance).toBe(1000 - q.quote.max_charge_credits);
    expect(credits.body.entries[0]).toMatchObject({ kind: "reserve", amount: -q.quote.max_charge_credits, run_id: res.body.id });
    const job = await h.deps.queues.get("workflow-run").getJobs(["waiting", "delayed", "prioritized"]);
    expect(job.map((j) => j.data.runId)).toContain(res.body.id);
    const listed = await h.http.get(`/api/entities/${q.entityId}/skill-runs`).set(auth(q.token));
    expect(listed.body.runs.map((r: { id: string }) => r.id)).toContain(res.body.id);
    const read = await h.http.get(res.body.links.self).set(auth(q.token));
    expect(read.body.id).toBe(res.body.id);
    await expectLedgerConsistent(h, q.workspaceId);
  });

  it("refuses a scope that changed since the quote (409 stale_quote)", async () => {
    const q = await quoted();
    const skills = await h.http.get(`/api/entities/${q.entityId}/skills`).set(auth(q.token));
    await h.http
      .put(`/api/entities/${q.entityId}/skills`)
      .set(auth(q.token))
      .send({
        expected_skills: skills.body.skills.map((s: { id: string; revision: number }) => ({ id: s.id, revision: s.revision })),
        skills: [{ skill_id: q.skillId, title: "Objective 1", question: "A different question" }],
      })
      .expect(200);
    const res = await q.run({ scope_hash: q.quote.scope_hash, max_charge_credits: q.quote.max_charge_credits });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("stale_quote");
    expect(await h.deps.db.workflowRun.count({ where: { workspaceId: q.workspaceId } })).toBe(0);
    await expectLedgerConsistent(h, q.workspaceId);
  });

  it("refuses an expired quote (409 quote_expired)", async () => {
    const q = await quoted();
    await h.deps.db.quote.updateMany({ where: { scopeHash: q.quote.scope_hash }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const res = await q.run({ scope_hash: q.quote.scope_hash, max_charge_credits: q.quote.max_charge_credits });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("quote_expired");
  });

  it("refuses a maximum below the estimate or above the quoted maximum", async () => {
    const q = await quoted();
    const low = await q.run({ scope_hash: q.quote.scope_hash, max_charge_credits: q.quote.estimated_credits - 1 });
    expect(low.status).toBe(422);
    expect(low.body.detail[0]).toMatchObject({ loc: ["body", "max_charge_credits"], type: "greater_than_equal" });
    const high = await q.run({ scope_hash: q.quote.scope_hash, max_charge_credits: q.quote.max_charge_credits + 1 });
    expect(high.status).toBe(422);
    expect(high.body.detail[0].type).toBe("less_than_equal");
  });

  it("refuses with 402 when the credits cannot cover the maximum, reserving nothing", async () => {
    const q = await quoted(1);
    const res = await q.run({ scope_hash: q.quote.scope_hash, max_charge_credits: q.quote.max_charge_credits });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ code: "insufficient_credits", balance: 1, required: q.quote.max_charge_credits });
    expect(await expectLedgerConsistent(h, q.workspaceId)).toBe(1);
  });

  it("requires a well-formed Idempotency-Key header", async () => {
    const q = await quoted();
    const res = await h.http
      .post(`/api/entities/${q.entityId}/skills/${q.skillId}/runs`)
      .set(auth(q.token))
      .send({ scope_hash: q.quote.scope_hash, max_charge_credits: q.quote.max_charge_credits });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ["header", "idempotency-key"], type: "missing" });
    const short = await q.run({ scope_hash: q.quote.scope_hash, max_charge_credits: q.quote.max_charge_credits }, "short");
    expect(short.status).toBe(422);
  });

  it("replays one run for ten parallel identical requests and refuses the key for another body", async () => {
    const q = await quoted();
    const key = randomId("parallel-");
    const body = { scope_hash: q.quote.scope_hash, max_charge_credits: q.quote.max_charge_credits };
    const answers = await Promise.all(Array.from({ length: 10 }, () => q.run(body, key)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(202));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(answers.filter((a) => a.headers["idempotent-replayed"] === "true")).toHaveLength(9);
    expect(await h.deps.db.workflowRun.count({ where: { workspaceId: q.workspaceId } })).toBe(1);
    const reserves = await h.deps.db.creditLedger.count({ where: { workspaceId: q.workspaceId, kind: "reserve" } });
    expect(reserves).toBe(1);
    const other = await q.run({ ...body, max_charge_credits: q.quote.estimated_credits }, key);
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("idempotency_conflict");
    await expectLedgerConsistent(h, q.workspaceId);
  });
});

describe("runs: a request without scope_hash approves the caller's latest quote", () => {
  it("answers approval_required with a fresh quote, then runs under it once, at its maximum", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    const skillId = ctx.skills[0]!.id;
    const run = (body: object, key = randomId("bare-"), query = "") =>
      h.http
        .post(`/api/entities/${ctx.entityId}/skills/${skillId}/runs${query}`)
        .set(auth(ctx.token))
        .set("Idempotency-Key", key)
        .send(body);

    const first = await run({}, "bare-key-1", "?source_mode=refresh");
    expect(first.status).toBe(409);
    expect(first.body).toMatchObject({
      code: "approval_required",
      quote: { skill_id: skillId, source_mode: "refresh", scope_hash: expect.any(String) },
    });
    expect(await h.deps.db.workflowRun.count({ where: { entityId: ctx.entityId } })).toBe(0);
    expect((await h.http.get(`/api/workspaces/${ctx.workspaceId}/credits`).set(auth(ctx.token))).body.balance).toBe(1000);

    // A quote of the other source mode approves nothing.
    expect((await run({}, "bare-key-2")).body.code).toBe("approval_required");

    const approved = await run({}, "bare-key-1", "?source_mode=refresh");
    expect(approved.status).toBe(202);
    expect(approved.body).toMatchObject({
      source_mode: "refresh",
      scope_hash: first.body.quote.scope_hash,
      max_charge_credits: first.body.quote.max_charge_credits,
      estimated_credits: first.body.quote.estimated_credits,
    });
    // Replayed under its key; the quote it used approves no second run.
    expect((await run({}, "bare-key-1", "?source_mode=refresh")).headers["idempotent-replayed"]).toBe("true");
    const again = await run({}, "bare-key-3", "?source_mode=refresh");
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("approval_required");
    // The key of a bare request is refused for an explicit approval.
    const other = await run(
      { scope_hash: again.body.quote.scope_hash, max_charge_credits: again.body.quote.max_charge_credits },
      "bare-key-1",
    );
    expect(other.body.code).toBe("idempotency_conflict");
    await expectLedgerConsistent(h, ctx.workspaceId);
  });

  it("refuses half an approval, and a source_mode other than the approved quote's", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    const skillId = ctx.skills[0]!.id;
    const quote = await h.http.get(`/api/entities/${ctx.entityId}/skills/${skillId}/quote?source_mode=saved`).set(auth(ctx.token));
    const run = (body: object, query = "") =>
      h.http
        .post(`/api/entities/${ctx.entityId}/skills/${skillId}/runs${query}`)
        .set(auth(ctx.token))
        .set("Idempotency-Key", randomId("half-"))
        .send(body);
    const half = await run({ scope_hash: quote.body.scope_hash });
    expect(half.status).toBe(422);
    expect(half.body.detail[0]).toMatchObject({ loc: ["body", "max_charge_credits"], type: "missing" });
    const mode = await run(
      { scope_hash: quote.body.scope_hash, max_charge_credits: quote.body.max_charge_credits },
      "?source_mode=refresh",
    );
    expect(mode.status).toBe(422);
    expect(mode.body.detail[0]).toMatchObject({ loc: ["query", "source_mode"] });
    expect((await run({}, "?source_mode=weekly")).status).toBe(422);
    expect(await h.deps.db.workflowRun.count({ where: { entityId: ctx.entityId } })).toBe(0);
  });
});

describe("operator credit grants", () => {
  it("grants credits to a workspace and refuses bad arguments", async () => {
    const { runAdminCommand } = await import("../../src/governance/admin/commands.js");
    const ctx = await onboardCompany(h);
    expect(await runAdminCommand(h.deps, ["grant-credits", ctx.workspaceId, "250", "welcome"])).toBe(
      `granted 250 credits to ${ctx.workspaceId}; balance 250`,
    );
    const credits = await h.http.get(`/api/workspaces/${ctx.workspaceId}/credits`).set(auth(ctx.token));
    expect(credits.body).toMatchObject({ balance: 250, entries: [{ kind: "grant", amount: 250, note: "welcome" }] });
    await expect(runAdminCommand(h.deps, ["grant-credits", ctx.workspaceId, "-5"])).rejects.toThrow(/usage/);
    await expect(runAdminCommand(h.deps, ["grant-credits", crypto.randomUUID(), "5"])).rejects.toThrow(/does not exist/);
    const stranger = await h.http.get(`/api/workspaces/${ctx.workspaceId}/credits`).set(auth(await h.token()));
    expect(stranger.status).toBe(404);
  });
});
