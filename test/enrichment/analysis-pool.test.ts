import { availableParallelism } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readIssues, readReviews } from "../../bench/quality/feedback/data/convert.js";
import { createBulkEmbedder } from "../../src/insights/embed/provider.js";
import { analyseRows, INLINE_SLICE_MS, type RowText } from "../../src/insights/enrichment/analyse.js";
import { type AnalysisPool, createAnalysisPool } from "../../src/insights/enrichment/analysis-pool.js";
import { adaptTrackerModel, readTrackerKinds } from "../../src/insights/enrichment/feedback-kind/adapt.js";
import { enrichContent } from "../../src/insights/enrichment/service.js";
import { enrichThreadsOf, loadConfig } from "../../src/platform/config.js";
import { createTenant, storeSources } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * Enrichment's analysis threads: a chunk analysed on a thread is the same as one analysed inline, a
 * chunk that finds every thread busy waits for one, the inline analysis lets the event loop answer while it
 * runs, and rows enriched through the threads store the units and kinds the inline analysis gives.
 */
const issues = readIssues().slice(0, 60);
const reviews = readReviews().slice(0, 60);
const texts: RowText[] = issues.flatMap((issue, i) => [
  { title: issue.title, content: issue.body.trim() === "" ? issue.title : issue.body },
  { title: "", content: reviews[i]!.text },
]);
const chunks = Array.from({ length: 6 }, (_, i) => texts.slice(i * 20, i * 20 + 20));

let h: Harness;
let threads: AnalysisPool;
beforeAll(async () => {
  h = await createHarness();
  threads = createAnalysisPool(1);
}, 60_000);
afterAll(async () => {
  await threads?.close();
  await h?.close();
});

describe("analysis threads", () => {
  it("give the inline analysis of every chunk, all on the thread, the caller's event loop left free", async () => {
    // Six chunks at once on one thread: they wait for it in turn; none is analysed on the caller's thread, whose
    // event loop keeps answering (a timer set now fires long before the last chunk is done).
    let lastChunkDone = 0;
    const timerFired = new Promise<number>((resolve) => setTimeout(() => resolve(performance.now()), 5));
    const results = await Promise.all(
      chunks.map(async (chunk) => {
        const result = await threads.analyse(chunk);
        lastChunkDone = performance.now();
        return result;
      }),
    );
    expect(results).toEqual(chunks.map((chunk) => analyseRows(chunk)));
    expect(threads.counts()).toEqual({ threaded: chunks.length, inline: 0 });
    expect(await timerFired).toBeLessThan(lastChunkDone);
  }, 60_000);

  it("analyse everything inline with no thread, giving the event loop its turns", async () => {
    const none = createAnalysisPool(0);
    expect(await none.analyse(chunks[0]!)).toEqual(analyseRows(chunks[0]!));
    expect(none.counts()).toEqual({ threaded: 0, inline: 1 });
    // 120 issues and reviews take far longer than one slice: a timer set now fires while they are analysed.
    let timerFired = Number.POSITIVE_INFINITY;
    setTimeout(() => {
      timerFired = performance.now();
    }, 1);
    const started = performance.now();
    expect(await none.analyse(texts)).toEqual(analyseRows(texts));
    const finished = performance.now();
    expect(finished - started).toBeGreaterThan(INLINE_SLICE_MS * 4);
    expect(timerFired).toBeLessThan(finished);
    await none.close();
  });

  it("store the units and kinds of the inline analysis when rows are enriched through them", async () => {
    const tenant = await createTenant(h);
    const rows = texts.slice(0, 40);
    const ids = await storeSources(
      h,
      tenant,
      rows.map((row, i) => ({ platform: "github", title: row.title, content: row.content, id: `pool-${i}` })),
    );
    // Chunks of 7 rows: six chunks and a short one, each its own transaction.
    const result = await enrichContent(h.deps.pool, createBulkEmbedder(h.config), ids, threads.analyse, 7);
    expect(result.enriched).toBe(rows.length);
    const expected = analyseRows(rows);
    const stored = await h.deps.db.content.findMany({
      where: { id: { in: ids } },
      select: { id: true, enrichment: { select: { feedbackKind: true, feedbackKindConfidence: true } } },
    });
    const kindOf = new Map(stored.map((r) => [r.id, r.enrichment?.feedbackKind]));
    const confidenceOf = new Map(stored.map((r) => [r.id, r.enrichment?.feedbackKindConfidence]));
    const units = await h.deps.db.opinionUnit.findMany({ where: { contentId: { in: ids } }, orderBy: { startOffset: "asc" } });
    for (const [i, id] of ids.entries()) {
      expect(kindOf.get(id)).toBe(expected[i]!.kind.kind);
      // The model's probability of the class the kind came from, stored as a real to 4 decimals.
      expect(confidenceOf.get(id)).toBeCloseTo(expected[i]!.kind.confidence, 4);
      expect(expected[i]!.kind.confidence).toBeGreaterThan(0.25);
      const mine = units.filter((u) => u.contentId === id);
      expect(mine.map((u) => [u.startOffset, u.endOffset, u.text, u.aspect, u.kind])).toEqual(
        expected[i]!.spans.map((s) => [s.start, s.end, s.text, s.aspect, s.kind]),
      );
    }
  }, 60_000);

  it("adapt to a tracker and read its issues on the thread as inline (kind-adaptation.ts)", async () => {
    const KIND = { bug: "bug_report", feature: "feature_request", question: "question" } as const;
    const repo = readIssues().filter((i) => i.repo === "TokTok/c-toxcore");
    const labelled = repo.slice(0, 60).map((i) => ({ title: i.title, content: i.body, kind: KIND[i.label] }));
    const rows = repo.slice(60, 80).map((i) => ({ title: i.title, content: i.body }));
    const overlay = adaptTrackerModel(labelled);
    expect(overlay).not.toBeNull();
    // The same adaptation (each one named anew).
    expect(await threads.kinds.adapt(labelled)).toEqual({ ...overlay, id: expect.any(String) });
    const inline = readTrackerKinds(overlay!, rows);
    expect(inline).toHaveLength(20);
    expect(await threads.kinds.read(overlay!, rows)).toEqual(inline);
    expect(await threads.kinds.adapt(labelled.slice(0, 5))).toBeNull();
  });
});

describe("ENRICH_THREADS and ENRICH_CHUNK_ROWS", () => {
  const base = { DATABASE_URL: "postgresql://x@127.0.0.1/x", AUTH_JWT_SECRET: "a-secret-of-sixteen-chars" };
  it("defaults to one per core in production, none elsewhere, and takes an explicit count", () => {
    expect(enrichThreadsOf(loadConfig({ ...base, NODE_ENV: "production" }))).toBe(availableParallelism());
    expect(enrichThreadsOf(loadConfig({ ...base, NODE_ENV: "test" }))).toBe(0);
    expect(enrichThreadsOf(loadConfig({ ...base, NODE_ENV: "production", ENRICH_THREADS: "3" }))).toBe(3);
    expect(() => loadConfig({ ...base, ENRICH_THREADS: "-1" })).toThrow(/ENRICH_THREADS/);
  });

  it("read 200 rows a chunk unless told 1 to 1,000", () => {
    expect(loadConfig(base).ENRICH_CHUNK_ROWS).toBe(200);
    expect(loadConfig({ ...base, ENRICH_CHUNK_ROWS: "500" }).ENRICH_CHUNK_ROWS).toBe(500);
    expect(() => loadConfig({ ...base, ENRICH_CHUNK_ROWS: "0" })).toThrow(/ENRICH_CHUNK_ROWS/);
    expect(() => loadConfig({ ...base, ENRICH_CHUNK_ROWS: "1001" })).toThrow(/ENRICH_CHUNK_ROWS/);
  });
});
