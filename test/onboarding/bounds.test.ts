import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { named, onboardingBody, words } from "./fixtures.js";

let h: Harness;
let token: string;
beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
});
afterAll(() => h.close());

const post = (body: unknown) =>
  h.http
    .post("/api/entities/onboarding")
    .set("Authorization", `Bearer ${token}`)
    .send(body as object);

const base = onboardingBody();
const objectives = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `o${i}`, title: `Objective ${i}` }));

async function expectAccepted(body: unknown) {
  const res = await post(body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res;
}

async function expectRefused(body: unknown, loc: (string | number)[], type?: string) {
  const before = await h.deps.db.entity.count();
  const res = await post(body);
  expect(res.status).toBe(422);
  const issue = (res.body.detail as { loc: (string | number)[]; type: string }[]).find(
    (d) => JSON.stringify(d.loc) === JSON.stringify(loc),
  );
  expect(issue, JSON.stringify(res.body.detail)).toBeDefined();
  if (type) expect(issue?.type).toBe(type);
  expect(await h.deps.db.entity.count()).toBe(before);
}

describe("onboarding bounds", () => {
  it("products: 20 accepted, 21 refused", async () => {
    const ok = await expectAccepted({ ...onboardingBody(), products: named("P", 20) });
    expect(ok.body.products).toHaveLength(20);
    await expectRefused({ ...onboardingBody(), products: named("P", 21) }, ["body", "products"], "too_long");
  });

  it("competitors: 20 accepted, 21 refused", async () => {
    const ok = await expectAccepted({ ...onboardingBody(), competitors: named("C", 20) });
    expect(ok.body.competitors).toHaveLength(20);
    await expectRefused({ ...onboardingBody(), competitors: named("C", 21) }, ["body", "competitors"], "too_long");
  });

  it("research objectives: 5 accepted, 6 refused", async () => {
    const ok = await expectAccepted({ ...onboardingBody(), research_objectives: objectives(5) });
    expect(ok.body.research_objectives).toHaveLength(5);
    await expectRefused({ ...onboardingBody(), research_objectives: objectives(6) }, ["body", "research_objectives"], "too_long");
  });

  it("keywords: 16 accepted, 17 refused, on the company, products and competitors", async () => {
    await expectAccepted({
      ...onboardingBody(),
      company: { ...base.company, keywords: words(16) },
      products: [{ name: "P", keywords: words(16) }],
      competitors: [{ name: "C", keywords: words(16) }],
    });
    await expectRefused(
      { ...onboardingBody(), company: { ...base.company, keywords: words(17) } },
      ["body", "company", "keywords"],
      "too_long",
    );
    await expectRefused(
      { ...onboardingBody(), products: [{ name: "P", keywords: words(17) }] },
      ["body", "products", 0, "keywords"],
      "too_long",
    );
    await expectRefused(
      { ...onboardingBody(), competitors: [{ name: "C" }, { name: "D", keywords: words(17) }] },
      ["body", "competitors", 1, "keywords"],
      "too_long",
    );
  });

  it("URLs must be well-formed http(s) URLs wherever they appear", async () => {
    await expectRefused({ ...onboardingBody(), company: { ...base.company, url: "not a url" } }, ["body", "company", "url"], "url_parsing");
    await expectRefused({ ...onboardingBody(), company: { ...base.company, url: "javascript:alert(1)" } }, ["body", "company", "url"]);
    await expectRefused({ ...onboardingBody(), products: [{ name: "P", url: "ftp://x.example.com" }] }, ["body", "products", 0, "url"]);
    await expectRefused({ ...onboardingBody(), competitors: [{ name: "C", url: "http://" }] }, ["body", "competitors", 0, "url"]);
    await expectRefused(
      { ...onboardingBody(), research_objectives: [{ title: "T", workflow: { document_destination: { url: "docs" } } }] },
      ["body", "research_objectives", 0, "workflow", "document_destination", "url"],
    );
    await expectAccepted({ ...onboardingBody(), company: { ...base.company, url: "" } });
  });

  it("source_intent and collection_mode take only the spec's values", async () => {
    await expectRefused({ ...onboardingBody(), source_intent: ["Cursor", "Emacs"] }, ["body", "source_intent", 1], "enum");
    await expectRefused({ ...onboardingBody(), collection_mode: "hybrid" }, ["body", "collection_mode"], "enum");
    const ok = await expectAccepted({ ...onboardingBody(), source_intent: ["Cursor", "Claude Code", "Codex", "OpenClaw"] });
    expect(ok.body.source_intent).toEqual(["Cursor", "Claude Code", "Codex", "OpenClaw"]);
  });

  it("required fields and nested objects are validated", async () => {
    const { company: _c, ...noCompany } = onboardingBody();
    await expectRefused(noCompany, ["body", "company"], "missing");
    await expectRefused({ ...onboardingBody(), company: { url: "https://x.example.com" } }, ["body", "company", "name"], "missing");
    await expectRefused({ ...onboardingBody(), products: [{ name: "" }] }, ["body", "products", 0, "name"], "string_too_short");
    await expectRefused(
      { ...onboardingBody(), research_objectives: [{ question: "q" }] },
      ["body", "research_objectives", 0, "title"],
      "missing",
    );
    await expectRefused({ ...onboardingBody(), request_id: "not-a-uuid" }, ["body", "request_id"], "uuid_parsing");
    await expectRefused({ ...onboardingBody(), workspace_id: "nope" }, ["body", "workspace_id"], "uuid_parsing");
    await expectRefused(
      { ...onboardingBody(), company: { ...base.company, platforms: ["myspace"] } },
      ["body", "company", "platforms", 0],
      "enum",
    );
    await expectRefused({ ...onboardingBody(), research_objectives: [{ title: "T", workflow: { inputs: { lookback_days: 0 } } }] }, [
      "body",
      "research_objectives",
      0,
      "workflow",
      "inputs",
      "lookback_days",
    ]);
    await expectRefused(
      { ...onboardingBody(), research_objectives: [{ title: "T", workflow: { inputs: { x_queries: words(17) } } }] },
      ["body", "research_objectives", 0, "workflow", "inputs", "x_queries"],
      "too_long",
    );
    await expectRefused(
      { ...onboardingBody(), research_objectives: [{ title: "T", workflow: { inputs: { slack_channels: [{ team_id: 5 }] } } }] },
      ["body", "research_objectives", 0, "workflow", "inputs", "slack_channels", 0, "team_id"],
      "string_type",
    );
    await expectRefused(
      {
        ...onboardingBody(),
        research_objectives: [
          { id: "a", title: "A" },
          { id: "a", title: "B" },
        ],
      },
      ["body", "research_objectives", 1, "id"],
    );
    await expectRefused({ ...onboardingBody(), company: { ...base.company, collection_targets: ["x"] } }, [
      "body",
      "company",
      "collection_targets",
    ]);
  });
});
