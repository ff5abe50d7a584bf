import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SKELETON_WORKFLOW } from "../../src/workflows/onboarding/schemas.js";
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

describe("POST /api/entities/onboarding", () => {
  it("creates workspace, project, entities and objectives with the skeleton workflow, and answers every id", async () => {
    const token = await h.token();
    const body = onboardingBody({
      research_objectives: [
        { id: "churn", title: "Why do customers churn?" },
        {
          title: "Pricing",
          workflow: { instructions: "Focus on pricing", model_routing: { allowed_models: ["m1"] }, inputs: { lookback_days: 30 } },
        },
      ],
    });
    const res = await post(token, body);
    expect(res.status).toBe(201);
    expect(res.headers["idempotent-replayed"]).toBe("false");
    const out = res.body;
    expect(out).toMatchObject({
      status: "created",
      request_id: body.request_id,
      workspace_created: true,
      collection_mode: "agent",
      source_intent: ["Cursor", "Claude Code"],
      company: { name: "Acme Analytics", kind: "company", url: "https://acme.example.com" },
      products: [{ name: "Acme Dash", kind: "product" }],
      competitors: [{ name: "Globex", kind: "competitor" }],
    });
    expect(out.entity_ids).toEqual([out.company.id, out.products[0].id, out.competitors[0].id]);
    expect(out.next.entity).toBe(`/api/entities/${out.company.id}`);
    expect(out.next.skills).toBe(`/api/entities/${out.company.id}/skills`);
    expect(out.research_objectives.map((o: { objective_id: string }) => o.objective_id)).toEqual(["churn", "objective-2"]);

    const db = h.deps.db;
    const user = await db.user.findFirstOrThrow({ where: { memberships: { some: { workspaceId: out.workspace_id } } } });
    expect(user.id).toBeTruthy();
    const project = await db.project.findUniqueOrThrow({ where: { id: out.project_id } });
    expect(project).toMatchObject({ workspaceId: out.workspace_id, collectionMode: "agent", sourceIntent: ["Cursor", "Claude Code"] });
    const entities = await db.entity.findMany({ where: { workspaceId: out.workspace_id } });
    expect(entities).toHaveLength(3);
    for (const e of entities.filter((x) => x.kind !== "company")) expect(e.parentEntityId).toBe(out.company.id);
    const company = entities.find((e) => e.kind === "company");
    expect(company).toMatchObject({ keywords: ["acme", "analytics"], platforms: ["reddit", "hackernews"], projectId: out.project_id });

    const skills = await db.skill.findMany({ where: { entityId: out.company.id }, orderBy: { position: "asc" } });
    expect(skills.map((s) => s.key)).toEqual(out.research_objectives.map((o: { skill_id: string }) => o.skill_id));
    expect(skills.map((s) => s.key)).toEqual(["churn", skills[1]!.id]);
    expect(skills[0]?.workflow).toEqual(SKELETON_WORKFLOW);
    expect(SKELETON_WORKFLOW).toEqual({
      version: 1,
      instructions: "",
      model_routing: { cost_tier: "medium", allowed_models: [] },
      filter_relevance: true,
      document_destination: { url: "" },
      inputs: {
        platforms: [],
        account_roles: [],
        slack_channels: [],
        lookback_days: 7,
        max_sources: 25,
        x_queries: [],
        x_min_likes: 500000,
      },
    });
    // A partial workflow is completed with the skeleton's values.
    expect(skills[1]?.workflow).toMatchObject({
      version: 1,
      instructions: "Focus on pricing",
      model_routing: { cost_tier: "medium", allowed_models: ["m1"] },
      inputs: { lookback_days: 30, max_sources: 25, x_min_likes: 500000 },
    });
  });

  it("defaults collection_mode to server and accepts null for optional fields", async () => {
    const token = await h.token();
    const res = await post(token, {
      company: { name: "Minimal Co", url: null, keywords: null },
      collection_mode: null,
      products: null,
      request_id: null,
      unknown_field: "ignored",
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      collection_mode: "server",
      source_intent: [],
      products: [],
      competitors: [],
      research_objectives: [],
    });
    expect(res.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("joins a workspace the caller is a member of, and answers 404 for one they are not", async () => {
    const owner = await h.token();
    const first = await post(owner, onboardingBody());
    expect(first.status).toBe(201);
    const workspaceId = first.body.workspace_id;

    const second = await post(owner, onboardingBody({ workspace_id: workspaceId, company: { name: "Second Co" } }));
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ workspace_id: workspaceId, workspace_created: false });
    expect(second.body.project_id).not.toBe(first.body.project_id);
    expect(await h.deps.db.project.count({ where: { workspaceId } })).toBe(2);

    const stranger = await h.token();
    const before = await h.deps.db.entity.count();
    const refused = await post(stranger, onboardingBody({ workspace_id: workspaceId }));
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ detail: expect.any(String), code: "not_found" });
    expect(await h.deps.db.entity.count()).toBe(before);
  });

  it("accepts a key with '*' and refuses an ingest-only key with 403", async () => {
    const token = await h.token();
    const makeKey = async (scopes: string[]) =>
      (await h.http.post("/api/user/keys").set("Authorization", `Bearer ${token}`).send({ name: "k", scopes })).body.raw_key as string;
    const full = await makeKey(["*"]);
    const ingest = await makeKey(["ingest"]);
    const ok = await h.http.post("/api/entities/onboarding").set("X-API-Key", full).send(onboardingBody());
    expect(ok.status).toBe(201);
    const refused = await h.http.post("/api/entities/onboarding").set("X-API-Key", ingest).send(onboardingBody());
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("insufficient_scope");
    const anonymous = await h.http.post("/api/entities/onboarding").send(onboardingBody());
    expect(anonymous.status).toBe(401);
  });
});
