import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analysisProcessor } from "../../workers/analysis.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { CORPUS } from "./corpus.js";
import { addEntity, createTenant, storeSources, type Tenant } from "./fixtures.js";
import { listen, openStream, type ParsedEvent } from "./sse-client.js";

/**
 * What the request's scope fields change. Only the analysis worker runs here, so the
 * stored rows stay un-enriched and the engine computes their opinion units on the fly.
 */
let h: Harness;
let base: string;
let closeServer: () => Promise<void>;
let tenant: Tenant;
let ids: string[];
let emptyEntity: string;
let otherInProject: string;
let outsideProject: string;

interface Evidence {
  content_id: string;
  platform: string;
  quote: string;
}
interface Result {
  status: string;
  data: {
    insights: { title: string; evidence: Evidence[] }[];
    evidence: Evidence[];
    limitations: string[];
    coverage: Record<string, { in_scope: number; retrieved: number; cited: number }>;
    scope: Record<string, unknown>;
    answer: string;
  };
}

beforeAll(async () => {
  h = await createHarness();
  ({ baseUrl: base, close: closeServer } = await listen(h));
  tenant = await createTenant(h);
  h.startWorkers({ "analysis.run.v1": analysisProcessor });
  ids = await storeSources(h, tenant, CORPUS);
  emptyEntity = await addEntity(h, tenant, "Initech");
  otherInProject = await addEntity(h, tenant, "Acme Mobile", tenant.projectId);
  outsideProject = await addEntity(h, tenant, "Hooli");
  await storeSources(
    h,
    tenant,
    [
      { platform: "reddit", content: "The Acme Mobile app pricing is confusing and the app crashes on login." },
      { platform: "twitter", content: "Acme Mobile pricing for families is a great deal, I love it." },
    ],
    otherInProject,
  );
  await storeSources(
    h,
    tenant,
    [{ platform: "reddit", content: "Hooli pricing is outrageous and their support ignores customers." }],
    outsideProject,
  );
});
afterAll(async () => {
  await closeServer();
  await h.close();
});

async function analyse(body: Record<string, unknown>): Promise<{ events: ParsedEvent[]; result: Result }> {
  const stream = await openStream(`${base}/agent/v1/analysis/run`, { method: "POST", token: tenant.token, body });
  expect(stream.status).toBe(200);
  await stream.closed;
  const last = stream.events.at(-1)!;
  expect(last.event).toBe("result");
  return { events: stream.events, result: last.data as unknown as Result };
}

const citedPlatforms = (r: Result) => [...new Set(r.data.evidence.map((e) => e.platform))].sort();
const citedRows = (r: Result) => new Set(r.data.evidence.map((e) => e.content_id));

describe("analysis scope", () => {
  it("an empty scope answers a partial result that says why", async () => {
    const { events, result } = await analyse({ question: "What do users think about pricing?", entity_id: emptyEntity });
    expect(events.filter((e) => e.event === "evidence")).toHaveLength(0);
    expect(result.status).toBe("partial");
    expect(result.data.insights).toEqual([]);
    expect(result.data.evidence).toEqual([]);
    expect(result.data.limitations.join(" ")).toMatch(/no stored originals/i);
    const row = await h.deps.db.analysis.findFirstOrThrow({ where: { entityId: emptyEntity } });
    expect(row.status).toBe("partial");
    expect(await h.deps.db.entityInsight.count({ where: { analysisId: row.id } })).toBe(0);
  });

  it("computes opinion units on the fly for rows not yet enriched, and says so", async () => {
    expect(await h.deps.db.opinionUnit.count({ where: { contentId: { in: ids } } })).toBe(0);
    const { result } = await analyse({ question: "What do users think about pricing?", entity_id: tenant.entityId });
    expect(result.status).toBe("completed");
    expect(result.data.evidence.length).toBeGreaterThan(1);
    expect(result.data.limitations.join(" ")).toMatch(/not enriched yet/);
    const stored = await h.deps.db.insightEvidence.findMany({ where: { contentId: { in: ids } } });
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.every((e) => e.opinionUnitId === null)).toBe(true);
  });

  it("platforms narrow the rows, with news read as web and hackernews", async () => {
    const github = await analyse({ question: "pricing", entity_id: tenant.entityId, platforms: ["github"] });
    expect(citedPlatforms(github.result)).toEqual(["github"]);
    expect(Object.keys(github.result.data.coverage)).toEqual(["github"]);
    expect(github.result.status).toBe("partial"); // one source only
    expect(github.result.data.limitations.join(" ")).toMatch(/Only 1 source/);

    const news = await analyse({ question: "pricing and support", entity_id: tenant.entityId, platforms: ["news"] });
    expect(Object.keys(news.result.data.coverage).sort()).toEqual(["hackernews", "web"]);
    expect(citedPlatforms(news.result).every((p) => ["hackernews", "web"].includes(p))).toBe(true);
  });

  it("search_mode picks the platform class: web_only never cites first-party rows, knowledge only them", async () => {
    const web = await analyse({ question: "pricing", entity_id: tenant.entityId, search_mode: "web_only" });
    expect(web.result.data.coverage.meetingnotes).toBeUndefined();
    expect(citedPlatforms(web.result)).not.toContain("meetingnotes");

    const knowledge = await analyse({ question: "pricing", entity_id: tenant.entityId, search_mode: "knowledge" });
    expect(Object.keys(knowledge.result.data.coverage)).toEqual(["meetingnotes"]);
    expect(citedPlatforms(knowledge.result)).toEqual(["meetingnotes"]);
    expect(knowledge.result.data.evidence[0]?.quote).toMatch(/^Customer: /);

    const none = await analyse({ question: "pricing", entity_id: tenant.entityId, search_mode: "user_only", platforms: ["reddit"] });
    expect(none.result.status).toBe("partial");
    expect(none.result.data.limitations.join(" ")).toMatch(/No platform is left/);
  });

  it("project_id covers the project's entities and no others; entity and project together intersect", async () => {
    const project = await analyse({ question: "pricing", project_id: tenant.projectId, depth: "deep" });
    const rows = await h.deps.db.content.findMany({ where: { id: { in: [...citedRows(project.result)] } } });
    const entities = new Set(rows.map((r) => r.entityId));
    expect(entities.has(otherInProject)).toBe(true);
    expect(entities.has(outsideProject)).toBe(false);

    const mismatch = await analyse({ question: "pricing", project_id: tenant.projectId, entity_id: outsideProject });
    expect(mismatch.result.status).toBe("partial");
    expect(mismatch.result.data.limitations.join(" ")).toMatch(/does not belong to the project/);

    const everything = await analyse({ question: "pricing" });
    const all = await h.deps.db.content.findMany({ where: { id: { in: [...citedRows(everything.result)] } } });
    expect(all.length).toBeGreaterThan(0);
  });

  it("depth deep cites more than brief: more evidence per insight, up to more insights", async () => {
    const brief = await analyse({ question: "pricing support onboarding dashboard", entity_id: tenant.entityId, depth: "brief" });
    const deep = await analyse({ question: "pricing support onboarding dashboard", entity_id: tenant.entityId, depth: "deep" });
    expect(brief.result.data.insights.length).toBeLessThanOrEqual(3);
    for (const insight of brief.result.data.insights) expect(insight.evidence.length).toBeLessThanOrEqual(2);
    expect(deep.result.data.insights.length).toBeGreaterThanOrEqual(brief.result.data.insights.length);
    expect(deep.result.data.insights.some((i) => i.evidence.length > 2)).toBe(true);
    expect(deep.result.data.evidence.length).toBeGreaterThan(brief.result.data.evidence.length);
  });

  it("provided_sources analyses exactly those rows", async () => {
    const chosen = [ids[0]!, ids[4]!];
    const { result } = await analyse({
      question: "pricing and onboarding",
      provided_sources: chosen.map((content_id) => ({ content_id })),
    });
    expect(result.data.evidence.length).toBeGreaterThan(0);
    for (const id of citedRows(result)) expect(chosen).toContain(id);
    expect(result.data.scope).toMatchObject({ provided_sources: 2 });
  });
});
