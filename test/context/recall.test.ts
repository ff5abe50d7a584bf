import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageEmbeddingText } from "../../src/insights/context/embedding.js";
import { keywordRanking } from "../../src/insights/context/repo.js";
import { keywordQuery } from "../../src/insights/context/service.js";
import { CommonTerms } from "../../src/insights/context/terms.js";
import { encodeTexts } from "../../src/insights/embed/encoder.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { projectOf, signIn, type TestUser } from "./helpers.js";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const paths = (res: { body: { results: { path: string }[] } }) => res.body.results.map((r) => r.path);
const filler = Array.from(
  { length: 300 },
  (_, i) => `${["harbor", "violet", "marble", "canyon", "lantern", "orchid"][i % 6]}${i % 7}`,
).join(" ");

/** Whether PostgreSQL full text matches `text` for `query` (the recall's keyword test). */
async function lexicalMatch(text: string, query: string): Promise<boolean> {
  const rows = await h.deps.db.$queryRaw<{ m: boolean }[]>`
    SELECT to_tsvector('english', ${text}) @@ websearch_to_tsquery('english', ${query}) AS m`;
  return rows[0]?.m ?? false;
}
/** The cosine of the query's and the page's vectors under the default embedder (the encoder). */
async function similarity(query: string, title: string, content: string): Promise<number> {
  const [q, p] = await encodeTexts([query, pageEmbeddingText(title, content)], { batchSize: 1 });
  return q!.reduce((s, v, i) => s + v * p![i]!, 0);
}

describe("GET /agent/v1/context/recall: hybrid ranking", () => {
  const query = "telemetrydashboards";
  const vectorOnly = { title: "Observability", content: "Telemetry dashboards: the telemetry dashboard shows dashboards of telemetry." };
  const keywordOnly = { title: "Harbor log", content: `${filler} telemetrydashboards ${filler}` };
  const neither = { title: "Soup", content: "Lentil soup recipe with cumin, garlic and lemon." };
  let alice: TestUser;

  beforeAll(async () => {
    alice = await signIn(h);
    for (const [path, page] of Object.entries({ "vec/only": vectorOnly, "kw/only": keywordOnly, "neither/one": neither })) {
      expect((await alice.save({ ...page, path })).status).toBe(200);
    }
  });

  it("constructs its pages as claimed: one matches only lexically, one only by vector similarity, one by neither", async () => {
    expect(await lexicalMatch(`${vectorOnly.title} ${vectorOnly.content}`, query)).toBe(false);
    expect(await similarity(query, vectorOnly.title, vectorOnly.content)).toBeGreaterThan(0.3);
    expect(await lexicalMatch(keywordOnly.content, query)).toBe(true);
    expect(await similarity(query, keywordOnly.title, keywordOnly.content)).toBeLessThan(h.config.CONTEXT_MIN_SIMILARITY);
    expect(await lexicalMatch(`${neither.title} ${neither.content}`, query)).toBe(false);
    expect(await similarity(query, neither.title, neither.content)).toBeLessThan(h.config.CONTEXT_MIN_SIMILARITY);
  });

  it("recalls both the keyword-only and the vector-only match, and not the page matching neither", async () => {
    const res = await alice.recall({ query });
    expect(res.status).toBe(200);
    expect(new Set(paths(res))).toEqual(new Set(["vec/only", "kw/only"]));
    expect(res.body.count).toBe(2);
    expect(res.body.query).toBe(query);
    // Each is first in its own ranking, so both carry the same fused score 1/(60+1).
    for (const r of res.body.results) expect(r.score).toBeCloseTo(1 / 61, 6);
  });

  it("answers every result field; a keyword match's snippet shows the matched passage", async () => {
    const res = await alice.recall({ query });
    const kw = res.body.results.find((r: { path: string }) => r.path === "kw/only");
    expect(kw).toEqual({
      path: "kw/only",
      title: "Harbor log",
      snippet: expect.stringContaining("**telemetrydashboards**"),
      score: expect.any(Number),
      tags: [],
      project_id: null,
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const vec = res.body.results.find((r: { path: string }) => r.path === "vec/only");
    expect(vec.snippet).toBe(vectorOnly.content);
  });

  it("ranks a page found by both rankings above pages found by one", async () => {
    await alice.save({ title: "Both", content: "Our telemetrydashboards page: telemetry dashboards everywhere.", path: "both/one" });
    const res = await alice.recall({ query });
    expect(paths(res)[0]).toBe("both/one");
    expect(res.body.results[0].score).toBeGreaterThan(res.body.results[1].score);
  });

  it("sees a replacement at once: replaced content is recalled by its new words, not its old ones", async () => {
    await alice.save({ title: "Volatile", content: "zeppelin hangar inspection", path: "volatile/page" });
    expect(paths(await alice.recall({ query: "zeppelin" }))).toContain("volatile/page");
    await alice.save({ title: "Volatile", content: "submarine periscope maintenance", path: "volatile/page" });
    expect(paths(await alice.recall({ query: "zeppelin" }))).not.toContain("volatile/page");
    expect(paths(await alice.recall({ query: "submarine" }))).toContain("volatile/page");
    // By vector alone too: a compound the full-text parser keeps whole.
    expect(await lexicalMatch("submarine periscope maintenance", "submarineperiscopes")).toBe(false);
    expect(await similarity("submarineperiscopes", "Volatile", "submarine periscope maintenance")).toBeGreaterThan(0.25);
    expect(paths(await alice.recall({ query: "submarineperiscopes" }))).toContain("volatile/page");
  });

  it("matches any of several plain words, ranking pages that hold more of them higher", async () => {
    await alice.save({ title: "Alpha", content: "quokka wombat numbat", path: "words/three" });
    await alice.save({ title: "Beta", content: "quokka sightings", path: "words/one" });
    const res = await alice.recall({ query: "quokka wombat numbat" });
    expect(paths(res).indexOf("words/three")).toBeLessThan(paths(res).indexOf("words/one"));
    expect(paths(res)).toContain("words/one");
    // Web-search syntax is taken as written: only the page holding the quoted phrase matches
    // by keyword, so it leads even though the other may be a vector neighbour.
    const terms = new CommonTerms(h.deps.db);
    expect(await keywordQuery(terms, '"quokka sightings"')).toEqual({ all: '"quokka sightings"', any: '"quokka sightings"' });
    expect(await keywordQuery(terms, "quokka -wombat")).toEqual({ all: "quokka -wombat", any: "quokka -wombat" });
    expect(await keywordQuery(terms, "the quokka  wombat")).toEqual({ all: "the quokka  wombat", any: "quokka or wombat" });
    const phrase = await alice.recall({ query: '"quokka sightings"' });
    expect(paths(phrase)[0]).toBe("words/one");
  });

  it("ranks, by keyword, a page holding every word above one repeating a single word", async () => {
    const spam = await alice.save({ title: "Spam", content: "dingo dingo dingo dingo dingo dingo dingo", path: "dingo/spam" });
    const both = await alice.save({ title: "Both words", content: `dingo and bilby, ${filler}`, path: "dingo/both" });
    const ranking = await keywordRanking(h.deps.db, alice.id, await keywordQuery(new CommonTerms(h.deps.db), "dingo bilby"), undefined, 10);
    expect(ranking).toEqual([both.body.id, spam.body.id]);
  });
});

describe("GET /agent/v1/context/recall: isolation between users", () => {
  it("never answers another user's page, not even an identical one at the same path", async () => {
    const alice = await signIn(h);
    const bob = await signIn(h);
    const page = { title: "Roadmap", content: "Flamingo launch plan for the flamingoproject.", path: "plans/roadmap" };
    await alice.save(page);
    await bob.save(page);
    await bob.save({ title: "Bob only", content: "Axolotl breeding schedule and axolotlhabitat notes.", path: "bob/only" });

    const own = await alice.recall({ query: "flamingo" });
    expect(own.body.count).toBe(1);
    expect(own.body.results).toHaveLength(1);
    // By keyword and by vector, Bob's page is not Alice's to find.
    for (const query of ["axolotl", "axolotlhabitats breeding", "Axolotl breeding schedule and axolotlhabitat notes."]) {
      const res = await alice.recall({ query });
      expect(res.status).toBe(200);
      expect(paths(res)).not.toContain("bob/only");
    }
    expect(paths(await bob.recall({ query: "axolotl" }))).toEqual(["bob/only"]);
    const pageIds = await h.deps.db.page.findMany({ where: { path: "plans/roadmap" }, select: { userId: true } });
    expect(new Set(pageIds.map((p) => p.userId))).toEqual(new Set([alice.id, bob.id]));
  });
});

describe("GET /agent/v1/context/recall: project scope", () => {
  it("recalls only the pages of the given project, and answers 404 for a project the caller cannot see", async () => {
    const carol = await signIn(h);
    const project = await projectOf(h, carol, "Research");
    const page = { title: "Pangolins", content: "pangolin survey, pangolin surveys" };
    await carol.save({ ...page, path: "in", project_id: project });
    await carol.save({ ...page, path: "out" });
    expect(new Set(paths(await carol.recall({ query: "pangolin" })))).toEqual(new Set(["in", "out"]));
    const scoped = await carol.recall({ query: "pangolin", project_id: project });
    expect(paths(scoped)).toEqual(["in"]);
    expect(scoped.body.results[0].project_id).toBe(project);
    // The vector ranking is scoped too (this query matches by vector only).
    expect(await lexicalMatch(`${page.title} ${page.content}`, "pangolinsurveys")).toBe(false);
    expect(await similarity("pangolinsurveys", page.title, page.content)).toBeGreaterThan(0.3);
    expect(paths(await carol.recall({ query: "pangolinsurveys", project_id: project }))).toEqual(["in"]);
    // Moving the page out of the project takes it out of the project's recall.
    await carol.save({ ...page, path: "in" });
    expect(paths(await carol.recall({ query: "pangolinsurveys", project_id: project }))).toEqual([]);
    expect(paths(await carol.recall({ query: "pangolin", project_id: project }))).toEqual([]);

    const dave = await signIn(h);
    const res = await dave.recall({ query: "pangolin", project_id: project });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
  });
});

describe("GET /agent/v1/context/recall: bounds", () => {
  let erin: TestUser;
  beforeAll(async () => {
    erin = await signIn(h);
    for (let i = 0; i < 22; i++) await erin.save({ title: `Okapi ${i}`, content: `okapi sighting number ${i}`, path: `okapi/${i}` });
  });

  it("answers 10 results by default and up to `limit` (1..20)", async () => {
    expect((await erin.recall({ query: "okapi" })).body.count).toBe(10);
    expect((await erin.recall({ query: "okapi", limit: 1 })).body.count).toBe(1);
    expect((await erin.recall({ query: "okapi", limit: 20 })).body.results).toHaveLength(20);
  });

  it.each([
    [{ query: "okapi", limit: 0 }, ["query", "limit"], "greater_than_equal"],
    [{ query: "okapi", limit: 21 }, ["query", "limit"], "less_than_equal"],
    [{ query: "okapi", limit: "ten" }, ["query", "limit"], "int_parsing"],
    [{}, ["query", "query"], "missing"],
    [{ query: "   " }, ["query", "query"], "string_too_short"],
    [{ query: "q".repeat(1001) }, ["query", "query"], "string_too_long"],
    [{ query: "okapi", project_id: "nope" }, ["query", "project_id"], "uuid_parsing"],
  ])("refuses %j with the 422 shape", async (query, loc, type) => {
    const res = await erin.recall(query as Record<string, string>);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: [{ loc, msg: expect.any(String), type }] });
  });

  it("accepts a query of 1000 characters", async () => {
    const res = await erin.recall({ query: `okapi ${"z".repeat(994)}` });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(10);
  });

  it("answers an empty list when nothing matches by keyword or above the similarity floor", async () => {
    expect(await similarity("xylophonequintet", "Okapi 1", "okapi sighting number 1")).toBeLessThan(h.config.CONTEXT_MIN_SIMILARITY);
    const res = await erin.recall({ query: "xylophonequintet" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ results: [], count: 0, query: "xylophonequintet" });
  });
});
