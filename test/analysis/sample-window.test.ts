import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Focus } from "../../src/insights/analysis/focus.js";
import type { RetrievedRow } from "../../src/insights/analysis/retrieval.js";
import { topUpFromScope } from "../../src/insights/analysis/sample.js";
import { resolveScope } from "../../src/insights/analysis/scope.js";
import { textRank } from "../../src/insights/analysis/text-rank.js";
import { vectorRank } from "../../src/insights/analysis/vector.js";
import { HASHING_MODEL, hashingEmbedder } from "../../src/insights/embed/hashing.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { addEntity, createTenant, type Tenant } from "./fixtures.js";

/**
 * The bounded, index-ordered reads of an analysis's sample, on real PostgreSQL: topUpFromScope's tiers
 * (sources of the asked feedback kind, most sure first; sources with statements of the asked kind or
 * churn; sources with units on a named aspect, newest seen first; then the scope's other rows, newest
 * seen first, across entities), and vectorRank's window of the scope's newest rows (stored vectors of
 * the current model, on-the-fly embedding within its budget, older rows not scored).
 */
let h: Harness;
let stranger: Tenant;

const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1) + minutes * 60_000);

interface SourceSpec {
  entityId?: string;
  kind?: string;
  created: number;
  published?: number;
  feedbackKind?: string;
  confidence?: number | null;
  embedding?: number[];
  embeddingModel?: string;
  content?: string;
}
interface UnitSpec {
  aspect?: string;
  kind?: "opinion" | "request" | "bug" | "question";
  churn?: boolean;
}

async function store(t: Tenant, spec: SourceSpec, units: UnitSpec[] = []): Promise<string> {
  const id = randomUUID();
  const entityId = spec.entityId ?? t.entityId;
  await h.deps.db.content.create({
    data: {
      id,
      entityId,
      workspaceId: t.workspaceId,
      kind: spec.kind ?? "source",
      platform: "reddit",
      content: spec.content ?? `source ${id}`,
      contentHash: id,
      dedupKey: id,
      createdAt: at(spec.created),
      publishedAt: spec.published === undefined ? null : at(spec.published),
    },
  });
  // What enrichment would have written of it, in its own table (an original without any has no row there).
  if (spec.feedbackKind !== undefined || spec.confidence != null || spec.embedding !== undefined || spec.embeddingModel !== undefined)
    await h.deps.db.contentEnrichment.create({
      data: {
        contentId: id,
        entityId,
        platform: "reddit",
        createdAt: at(spec.created),
        feedbackKind: spec.feedbackKind ?? null,
        feedbackKindConfidence: spec.confidence ?? null,
        embedding: spec.embedding ?? [],
        embeddingModel: spec.embeddingModel ?? null,
      },
    });
  if (units.length > 0)
    await h.deps.db.opinionUnit.createMany({
      data: units.map((u, i) => ({
        contentId: id,
        entityId,
        startOffset: i * 10,
        endOffset: i * 10 + 5,
        text: "a unit",
        aspect: u.aspect ?? null,
        kind: u.kind ?? "opinion",
        churn: u.churn ?? false,
      })),
    });
  return id;
}

const scopeOf = (t: Tenant, entityId: string | null = t.entityId) =>
  resolveScope(h.deps.db, {
    userId: t.userId,
    // An analysis reads the workspace it belongs to.
    workspaceId: t.workspaceId,
    entityId,
    projectId: null,
    searchMode: undefined,
    platforms: [],
    providedSources: [],
  });
const retrieved = (id: string, entityId: string): RetrievedRow => ({
  id,
  entityId,
  platform: "reddit",
  kind: "source",
  url: "",
  title: "",
  author: "",
  publishedAt: null,
  content: "",
  feedbackKind: "bug_report",
  feedbackKindConfidence: 0.95,
  score: 5,
  via: ["text"],
});
const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
const bugs = {
  ask: "bugs",
  unitKinds: ["bug"],
  feedbackKinds: ["bug_report"],
  churn: false,
  compared: false,
  noun: "bug reports",
} as Focus;
const churn = { ask: "churn", unitKinds: [], feedbackKinds: [], churn: true, compared: false, noun: "reasons to leave" } as Focus;

beforeAll(async () => {
  h = await createHarness();
  stranger = await createTenant(h, "Hooli");
});
afterAll(async () => {
  await h.close();
});

describe("the kind tier", () => {
  let t: Tenant;
  const s: Record<string, string> = {};
  beforeAll(async () => {
    t = await createTenant(h, "Kind Notes");
    s.sure = await store(t, { created: 1, feedbackKind: "bug_report", confidence: 0.9 });
    s.midOld = await store(t, { created: 2, feedbackKind: "bug_report", confidence: 0.6 });
    s.midNew = await store(t, { created: 3, feedbackKind: "bug_report", confidence: 0.6 });
    s.low = await store(t, { created: 4, feedbackKind: "bug_report", confidence: 0.05 });
    s.unsure = await store(t, { created: 9, feedbackKind: "bug_report", confidence: null });
    s.retrieved = await store(t, { created: 5, feedbackKind: "bug_report", confidence: 0.95 });
    s.request = await store(t, { created: 6, feedbackKind: "feature_request", confidence: 0.99 });
    s.summary = await store(t, { created: 7, kind: "summary", feedbackKind: "bug_report", confidence: 0.99 });
    s.stranger = await store(stranger, { created: 8, feedbackKind: "bug_report", confidence: 0.99 });
  });

  it("adds sources of the asked kind, most sure first, null confidence last, after the retrieved row", async () => {
    const got = await topUpFromScope(h.deps.db, await scopeOf(t), [retrieved(s.retrieved!, t.entityId)], 6, [], bugs);
    expect(ids(got)).toEqual([s.retrieved, s.sure, s.midNew, s.midOld, s.low, s.unsure]);
    expect(got.slice(1).map((r) => [r.score, r.via])).toEqual(Array.from({ length: 5 }, () => [0, []]));
    expect(got[1]).toMatchObject({ feedbackKind: "bug_report", entityId: t.entityId });
  });

  it("never repeats a retrieved row, nor adds a summary or another workspace's row", async () => {
    const got = await topUpFromScope(h.deps.db, await scopeOf(t), [retrieved(s.retrieved!, t.entityId)], 20, [], bugs);
    expect(ids(got)).toEqual([s.retrieved, s.sure, s.midNew, s.midOld, s.low, s.unsure, s.request]);
  });
});

describe("the statement tier", () => {
  let t: Tenant;
  const s: Record<string, string> = {};
  beforeAll(async () => {
    t = await createTenant(h, "Statement Notes");
    s.bugA = await store(t, { created: 1, published: 10 }, [{ kind: "bug" }]);
    s.bugB = await store(t, { created: 5 }, [{ kind: "bug" }]); // seen when stored
    s.bugC = await store(t, { created: 2, published: 20 }, [{ kind: "opinion" }, { kind: "bug" }]);
    s.plain = await store(t, { created: 3, published: 30 }, [{ kind: "opinion" }]);
    s.churned = await store(t, { created: 4, published: 15 }, [{ churn: true }]);
    s.summary = await store(t, { created: 40, kind: "summary" }, [{ kind: "bug", churn: true }]);
  });

  it("picks sources with bug statements, newest seen first, before the recency tier", async () => {
    const got = await topUpFromScope(h.deps.db, await scopeOf(t), [], 4, [], bugs);
    expect(ids(got)).toEqual([s.bugC, s.bugA, s.bugB, s.plain]);
  });

  it("picks sources with churn statements for a churn focus", async () => {
    const got = await topUpFromScope(h.deps.db, await scopeOf(t), [], 2, [], churn);
    expect(ids(got)).toEqual([s.churned, s.plain]);
  });
});

describe("the aspect tier", () => {
  let t: Tenant;
  const s: Record<string, string> = {};
  beforeAll(async () => {
    t = await createTenant(h, "Aspect Notes");
    s.old = await store(t, { created: 1, published: 10 }, [{ aspect: "pricing" }]);
    s.mid = await store(t, { created: 2, published: 20 }, [{ aspect: "sync" }, { aspect: "pricing" }]);
    s.stored = await store(t, { created: 30 }, [{ aspect: "pricing" }]);
    s.sync = await store(t, { created: 3, published: 50 }, [{ aspect: "sync" }]);
    s.bare = await store(t, { created: 4, published: 45 });
  });

  it("adds sources with units on the aspect, newest seen first, then the newest others", async () => {
    const got = await topUpFromScope(h.deps.db, await scopeOf(t), [], 5, ["pricing"], null);
    expect(ids(got)).toEqual([s.stored, s.mid, s.old, s.sync, s.bare]);
  });
});

describe("the recency tier", () => {
  let t: Tenant;
  let second: string;
  const s: Record<string, string> = {};
  beforeAll(async () => {
    t = await createTenant(h, "Recent Notes");
    second = await addEntity(h, t, "Recent Notes Mobile");
    s.pubOld = await store(t, { created: 50, published: 10 });
    s.storedNewest = await store(t, { created: 60 });
    s.pub30 = await store(t, { created: 1, published: 30 });
    s.other40 = await store(t, { entityId: second, created: 2, published: 40 });
    s.other20 = await store(t, { entityId: second, created: 20 });
    s.other5 = await store(t, { entityId: second, created: 3, published: 5 });
  });

  it("orders by publication, else storage, merging the workspace's entities, up to the limit", async () => {
    const workspace = await scopeOf(t, null);
    expect(ids(await topUpFromScope(h.deps.db, workspace, [], 4, [], null))).toEqual([s.storedNewest, s.other40, s.pub30, s.other20]);
    expect(ids(await topUpFromScope(h.deps.db, workspace, [], 10, [], null))).toEqual([
      s.storedNewest,
      s.other40,
      s.pub30,
      s.other20,
      s.pubOld,
      s.other5,
    ]);
  });

  it("keeps to one entity's rows for an entity scope and skips a retrieved row", async () => {
    const got = await topUpFromScope(h.deps.db, await scopeOf(t), [retrieved(s.pub30!, t.entityId)], 10, [], null);
    expect(ids(got)).toEqual([s.pub30, s.storedNewest, s.pubOld]);
  });
});

describe("vectorRank's window", () => {
  let t: Tenant;
  const embedder = hashingEmbedder();
  const question = "offline sync loses my notes";
  let query: number[];
  const s: Record<string, string> = {};
  beforeAll(async () => {
    t = await createTenant(h, "Vector Notes");
    [query] = (await embedder.embed([question])) as [number[]];
    // The two oldest match the question exactly, but lie outside a window of three.
    s.oldest = await store(t, { created: 1, embedding: query, embeddingModel: HASHING_MODEL, content: question });
    s.older = await store(t, { created: 2, embedding: query, embeddingModel: HASHING_MODEL, content: question });
    s.stored = await store(t, { created: 3, embedding: query, embeddingModel: HASHING_MODEL, content: "not what is stored" });
    s.otherModel = await store(t, { created: 4, embedding: query, embeddingModel: "another-model", content: question });
    s.bare = await store(t, { created: 5, content: "the editor toolbar is cluttered" });
  });

  it("scores stored vectors of the model, embeds the newest pending row, and leaves older rows unscored", async () => {
    const got = await vectorRank(h.deps.db, embedder, await scopeOf(t), query, {
      limit: 10,
      maxScan: 3,
      maxOnTheFly: 1,
      minSimilarity: -1,
    });
    expect(ids(got.hits)).toEqual([s.stored, s.bare]);
    expect(got.hits[0]!.similarity).toBeCloseTo(1, 4);
    expect(got.hits[1]!.similarity).toBeLessThan(0.5);
    expect(got.unscored).toBe(1);
  });
});

describe("textRank's window for words in much of the scope", () => {
  let t: Tenant;
  const s: Record<string, string> = {};
  beforeAll(async () => {
    t = await createTenant(h, "Text Notes");
    // "notes" is in every row; "export" only in the oldest; "sync" in two.
    s.exportOld = await store(t, { created: 1, content: "notes export to pdf fails" });
    s.syncOld = await store(t, { created: 2, content: "notes sync is slow" });
    s.plain1 = await store(t, { created: 3, content: "notes notes notes everywhere" });
    s.plain2 = await store(t, { created: 4, content: "the notes app" });
    s.syncNew = await store(t, { created: 5, content: "notes sync broke today" });
  });

  it("ranks every match when no word is common", async () => {
    const got = await textRank(h.deps.db, await scopeOf(t), "sync export", 10);
    expect(got.windowed).toEqual([]);
    expect(new Set(got.ids)).toEqual(new Set([s.exportOld, s.syncOld, s.syncNew]));
  });

  it("ranks a common word's matches among the newest rows only, and rarer words over the whole scope", async () => {
    // The lexemes' matches in scope, as the planner would estimate them on a table of this size: "note" is
    // common, "sync" and "export" rare.
    const matches: Record<string, number> = { note: 5, sync: 2, export: 1 };
    const got = await textRank(h.deps.db, await scopeOf(t), "notes sync export", 10, {
      rankAllUpTo: 2,
      window: 2,
      estimate: (lexeme) => matches[lexeme]!,
    });
    expect(got.windowed).toEqual(["note"]);
    // The window (two newest rows) gives syncNew and plain2; the rare words add the older sync and export rows;
    // plain1, matching only the common word outside the window, is not ranked.
    expect(new Set(got.ids)).toEqual(new Set([s.syncNew, s.plain2, s.syncOld, s.exportOld]));
    expect(got.ids).not.toContain(s.plain1);
    // Scores are of the whole question: the rows with two of its words lead.
    expect(got.ids.slice(0, 3).sort()).toEqual([s.exportOld, s.syncNew, s.syncOld].sort());
  });
});
