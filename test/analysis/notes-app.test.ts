import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sliceCodePoints } from "../../src/insights/enrichment/opinions.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { createTenant, storeSources, type Tenant, waitFor } from "./fixtures.js";
import { NOTES_APP, NOTES_APP_QUESTION } from "./notes-app-corpus.js";
import { listen, runAnalysis } from "./sse-client.js";

/**
 * The notes-app scenario end to end: twelve posts ingested and enriched, a deep analysis
 * run over HTTP, and the themes a product manager would act on.
 */
interface Insight {
  title: string;
  summary: string;
  sentiment: string;
  aspect: string | null;
  polarity: string;
  sources: number;
  counts?: { complaint: number; praise: number; neutral: number; request: number };
  evidence: { number: number; content_id: string; quote: string; start_offset: number; end_offset: number }[];
}
interface Result {
  answer: string;
  insights: Insight[];
  evidence: Insight["evidence"];
  citations: { number: number }[];
}

let h: Harness;
let base: string;
let closeServer: () => Promise<void>;
let tenant: Tenant;
let ids: string[];

beforeAll(async () => {
  h = await createHarness();
  ({ baseUrl: base, close: closeServer } = await listen(h));
  tenant = await createTenant(h, "Acme Notes");
  h.startWorkers({ "analysis.run.v1": analysisProcessor, "enrichment.content.v1": enrichmentProcessor });
  ids = await storeSources(h, tenant, NOTES_APP);
  await waitFor(async () =>
    (await h.deps.db.content.count({ where: { id: { in: ids }, enrichment: { enrichedAt: { not: null } } } })) === ids.length
      ? true
      : undefined,
  );
});
afterAll(async () => {
  await closeServer();
  await h.close();
});

const analyse = (question: string, depth = "deep") => runAnalysis<Result>(base, tenant, question, depth);

const postIndex = (contentId: string) => ids.indexOf(contentId);
const sourcesOf = (i: Insight) => new Set(i.evidence.map((e) => postIndex(e.content_id)));

describe("notes app: complaints and praise, deep", () => {
  let result: { status: string; data: Result };
  const byAspect = (aspect: string) => result.data.insights.find((i) => i.aspect === aspect && i.polarity !== "request");

  beforeAll(async () => {
    result = await analyse(NOTES_APP_QUESTION);
  });

  it("groups the sync failures into one complaint theme, and keeps the confusing conflict dialog apart", () => {
    const sync = byAspect("sync");
    expect(sync).toMatchObject({ title: "Sync — complaints (2 sources)", polarity: "complaint", sentiment: "negative", sources: 2 });
    expect(sourcesOf(sync!)).toEqual(new Set([0, 2]));
    expect(sourcesOf(byAspect("sync conflict dialog")!)).toEqual(new Set([1]));
  });

  it("groups the three pricing complaints ($4 to $10 a month, ten dollars, a steep price) into one theme", () => {
    const pricing = byAspect("pricing");
    expect(pricing).toMatchObject({ title: "Pricing — complaints (3 sources)", polarity: "complaint", sources: 3 });
    expect(sourcesOf(pricing!)).toEqual(new Set([3, 4, 5]));
  });

  it("finds the crash, and the missing PDF search, as complaints, named in the posts' own words", () => {
    expect(byAspect("app crashes")).toMatchObject({ polarity: "complaint", sources: 1 });
    expect(sourcesOf(byAspect("app crashes")!)).toEqual(new Set([6]));
    expect(byAspect("pdf attachments")).toMatchObject({ title: "PDF attachments — complaints (1 source)", polarity: "complaint" });
    expect(sourcesOf(byAspect("pdf attachments")!)).toEqual(new Set([7]));
  });

  it("reports the web clipper wish as a feature request, not praise", () => {
    const wish = result.data.insights.find((i) => sourcesOf(i).has(8))!;
    expect(wish).toMatchObject({ aspect: "web clipper", polarity: "request", sentiment: "neutral" });
    expect(wish.title).toBe("Web clipper — feature request (1 source)");
    for (const i of result.data.insights.filter((x) => x.polarity === "praise")) expect(sourcesOf(i).has(8)).toBe(false);
  });

  it("praises the editor's shortcuts, offline mode and the support team", () => {
    expect(byAspect("markdown shortcuts")).toMatchObject({ polarity: "praise", sources: 1 });
    expect(sourcesOf(byAspect("markdown shortcuts")!)).toEqual(new Set([9]));
    expect(byAspect("offline mode")).toMatchObject({ polarity: "praise", sources: 1 });
    expect(byAspect("support team")).toMatchObject({ title: "Support team — praise (1 source)", polarity: "praise" });
  });

  it("names themes after what the posts talk about: never a stop word, an opinion verb, a passing word or the product's own name", () => {
    for (const i of result.data.insights) {
      expect(i.aspect).not.toMatch(/^(like|love|love editor|mode|dollar|dollars|month|flight|hitch|note|notes|acme|app|it|i'm)$/i);
      expect(i.title).toMatch(/ — (complaints|praise|split|feature requests?|mentioned without a clear opinion)/);
    }
  });

  it("ranks by distinct sources and covers every aspect (each is said by more than 3% of the 12 sources)", () => {
    const sources = result.data.insights.map((i) => i.sources);
    expect(sources.slice(0, 2)).toEqual([3, 2]);
    expect(new Set(result.data.insights.flatMap((i) => [...sourcesOf(i)]))).toEqual(new Set(NOTES_APP.map((_, i) => i)));
  });

  it("answers the question: complaints first, then praise, then requests, each claim cited, counts in sources", () => {
    const { answer, citations } = result.data;
    expect(answer).toMatch(/^The biggest complaints are about pricing \(3 sources\) (\[\d+\])+, sync \(2 sources\) (\[\d+\])+/);
    expect(answer.indexOf("Praised:")).toBeGreaterThan(answer.indexOf("app crashes"));
    expect(answer).toMatch(/Feature requests: web clipper \(1 source\) \[\d+\]/);
    expect(answer).not.toMatch(/\bpeople\b|\busers\b/i);
    const cited = [...answer.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
    expect(new Set(cited)).toEqual(new Set(citations.map((c) => c.number)));
  });

  it("quotes verbatim, with exact code-point offsets", async () => {
    expect(result.status).toBe("completed");
    const rows = await h.deps.db.content.findMany({ where: { id: { in: ids } } });
    for (const e of result.data.evidence) {
      const row = rows.find((r) => r.id === e.content_id)!;
      expect(sliceCodePoints(row.content, e.start_offset, e.end_offset)).toBe(e.quote);
    }
  });
});

describe("notes app: the question decides what leads", () => {
  it("a question about praise leads with praise; a brief one still gets complaints and praise when both are asked", async () => {
    const praise = await analyse("What do people love about Acme Notes?");
    expect(praise.data.answer).toMatch(/^Most praised: /);
    expect(praise.data.insights[0]!.polarity).toBe("praise");

    const brief = await analyse(NOTES_APP_QUESTION, "brief");
    expect(brief.data.insights).toHaveLength(3);
    expect(brief.data.insights.map((i) => i.polarity)).toEqual(expect.arrayContaining(["complaint", "praise"]));
  });

  it("a question about one aspect leads with that aspect", async () => {
    const pricing = await analyse("What do users think about the pricing?");
    expect(pricing.data.insights[0]).toMatchObject({ aspect: "pricing", polarity: "complaint" });
    expect(pricing.data.answer).toMatch(/^On pricing, 3 sources complain (\[\d+\])+\./);
  });

  it("a question about requests leads with feature requests", async () => {
    const requests = await analyse("Which features are users asking for?");
    // Answered from the requests only, each theme named after what it asks for.
    expect(requests.data.answer).toMatch(/^Most requested: web clipper \(1 source\) \[1\]\. Counts are distinct sources/);
    expect(requests.data.insights.every((i) => i.polarity === "request")).toBe(true);
  });
});
