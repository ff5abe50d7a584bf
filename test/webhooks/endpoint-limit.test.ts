import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { bearer, newWorkspace, registerEndpoint } from "./support.js";

/**
 * A workspace has at most WEBHOOK_MAX_ENDPOINTS (default 20) live endpoints: one more is a 422 in
 * the validation shape and stores nothing, also when registrations race at the limit.
 */
let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const url = (i: number | string) => `https://93.184.215.14/hooks/${i}`;
const register = (token: string, workspaceId: string, i: number | string) =>
  h.http
    .post(`/api/workspaces/${workspaceId}/webhooks`)
    .set(bearer(token))
    .send({ url: url(i) });
const live = (workspaceId: string) => h.deps.db.webhookEndpoint.count({ where: { workspaceId, deletedAt: null } });
const created = (workspaceId: string) => h.deps.db.workspaceAudit.count({ where: { workspaceId, action: "webhook.created" } });

async function fill(token: string, workspaceId: string, n: number) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await registerEndpoint(h, token, workspaceId, { url: url(i) })).id);
  return ids;
}

describe("the endpoint limit", () => {
  it("refuses the 21st live endpoint with a 422 naming the limit, stores nothing, and has room again after a delete", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const ids = await fill(token, workspaceId, 20);

    const refused = await register(token, workspaceId, "one-too-many");
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      detail: [
        {
          loc: ["body"],
          msg: "This workspace has 20 webhook endpoints; the limit is 20. Delete one before registering another.",
          type: "value_error",
        },
      ],
    });
    expect(await live(workspaceId)).toBe(20);
    expect(await created(workspaceId)).toBe(20);
    expect(await h.deps.db.webhookEndpoint.count({ where: { url: url("one-too-many") } })).toBe(0);

    // Another workspace has a limit of its own.
    const other = await newWorkspace(h);
    expect((await register(other.token, other.workspaceId, "elsewhere")).status).toBe(201);

    // A deleted endpoint no longer counts.
    expect((await h.http.delete(`/api/workspaces/${workspaceId}/webhooks/${ids[0]}`).set(bearer(token))).status).toBe(204);
    expect((await register(token, workspaceId, "replacement")).status).toBe(201);
    expect((await register(token, workspaceId, "again-too-many")).status).toBe(422);
    expect(await live(workspaceId)).toBe(20);
  });

  it("lets exactly one of two registrations racing at 19 through, and five of ten racing at 15", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    await fill(token, workspaceId, 19);
    const pair = await Promise.all([register(token, workspaceId, "race-a"), register(token, workspaceId, "race-b")]);
    expect(pair.map((r) => r.status).sort()).toEqual([201, 422]);
    expect(await live(workspaceId)).toBe(20);
    expect(await created(workspaceId)).toBe(20);

    const second = await newWorkspace(h);
    await fill(second.token, second.workspaceId, 15);
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => register(second.token, second.workspaceId, `burst-${i}`)));
    const statuses = burst.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 422)).toHaveLength(5);
    expect(await live(second.workspaceId)).toBe(20);
  });
});
