import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { onboardingBody } from "./fixtures.js";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const post = (token: string, body: unknown) =>
  h.http
    .post("/api/entities/onboarding")
    .set("Authorization", `Bearer ${token}`)
    .send(body as object);

const counts = async () => ({
  workspaces: await h.deps.db.workspace.count(),
  projects: await h.deps.db.project.count(),
  entities: await h.deps.db.entity.count(),
  skills: await h.deps.db.skill.count(),
  requests: await h.deps.db.onboardingRequest.count(),
});

describe("onboarding idempotency on request_id", () => {
  it("a retry with the same body answers the same 201 and creates nothing", async () => {
    const token = await h.token();
    const body = onboardingBody();
    const first = await post(token, body);
    expect(first.status).toBe(201);
    const after = await counts();

    // Same request, keys in another order and explicit nulls: the same request.
    const { company, ...rest } = body;
    const retry = await post(token, { workspace_id: null, ...rest, company });
    expect(retry.status).toBe(201);
    expect(retry.headers["idempotent-replayed"]).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(await counts()).toEqual(after);
  });

  it("the same request_id with a different body is a 409 idempotency_conflict that creates nothing", async () => {
    const token = await h.token();
    const body = onboardingBody();
    expect((await post(token, body)).status).toBe(201);
    const after = await counts();
    const res = await post(token, { ...body, competitors: [] });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ detail: expect.any(String), code: "idempotency_conflict" });
    expect(await counts()).toEqual(after);

    // Another user reusing the id is refused too, and sees nothing of the first answer.
    const other = await post(await h.token(), body);
    expect(other.status).toBe(409);
    expect(JSON.stringify(other.body)).not.toContain(body.company.name);
  });

  it("two concurrent identical requests create one workspace", async () => {
    const token = await h.token();
    const body = onboardingBody({ request_id: randomUUID() });
    const before = await counts();
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(token, body)));
    for (const a of answers) expect(a.status).toBe(201);
    const ids = new Set(answers.map((a) => a.body.workspace_id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.headers["idempotent-replayed"] === "false")).toHaveLength(1);
    const after = await counts();
    expect(after.workspaces - before.workspaces).toBe(1);
    expect(after.projects - before.projects).toBe(1);
    expect(after.entities - before.entities).toBe(3);
    expect(after.requests - before.requests).toBe(1);
  });
});
