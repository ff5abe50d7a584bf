import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { named, onboardingBody } from "./fixtures.js";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  // A real database failure: this clone refuses one competitor name.
  await h.deps.db.$executeRawUnsafe(`ALTER TABLE entities ADD CONSTRAINT test_refuse_poison CHECK (name <> 'Poison Competitor')`);
});
afterAll(() => h.close());

const tables = ["workspaces", "workspace_members", "projects", "entities", "skills", "onboarding_requests"] as const;
const counts = async () => {
  const out = {} as Record<(typeof tables)[number], number>;
  for (const t of tables) {
    const rows = await h.deps.db.$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*)::bigint AS n FROM ${t}`);
    out[t] = Number(rows[0]?.n ?? 0);
  }
  return out;
};

describe("onboarding is all-or-nothing", () => {
  it("a database failure on the last competitor leaves no workspace, project, entity or objective behind", async () => {
    const token = await h.token();
    const before = await counts();
    const competitors = [...named("Competitor", 19), { name: "Poison Competitor", url: "https://poison.example.com" }];
    const body = onboardingBody({ products: named("Product", 20), competitors });
    const res = await h.http.post("/api/entities/onboarding").set("Authorization", `Bearer ${token}`).send(body);
    expect(res.status).toBe(500);
    expect(res.body.code).toBe("internal_error");
    expect(JSON.stringify(res.body)).not.toContain("test_refuse_poison");
    expect(await counts()).toEqual(before);

    // The request_id was not consumed: the same id with a valid body succeeds afterwards.
    const fixed = { ...body, competitors: named("Competitor", 20) };
    const ok = await h.http.post("/api/entities/onboarding").set("Authorization", `Bearer ${token}`).send(fixed);
    expect(ok.status).toBe(201);
    expect(ok.body.competitors).toHaveLength(20);
    const after = await counts();
    expect(after.workspaces - before.workspaces).toBe(1);
    expect(after.entities - before.entities).toBe(41);
  });
});
