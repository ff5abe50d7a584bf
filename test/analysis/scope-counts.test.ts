import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Focus } from "../../src/insights/analysis/focus.js";
import type { SearchMode } from "../../src/insights/analysis/schemas.js";
import { type AnalysisScope, evidenceRowCondition, resolveScope, scopeCondition } from "../../src/insights/analysis/scope.js";
import { type ScopeCounts, scopeCounts } from "../../src/insights/analysis/scope-counts.js";
import type { Theme } from "../../src/insights/analysis/themes.js";
import { Prisma } from "../../src/platform/db.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { addEntity, createEntity, createTenant, type Tenant } from "./fixtures.js";

/**
 * The counts over every stored source in scope (src/insights/analysis/scope-counts.ts), on real PostgreSQL:
 * a small corpus whose counts are worked out by hand, then a random corpus on which the one-pass
 * statement must answer exactly what the per-theme statement it replaced answered, for every focus
 * and every kind of scope. Originals and units are inserted directly, so each unit's aspect, terms,
 * kind and side are known.
 */
let h: Harness;
let tenant: Tenant;
let otherEntity: string;
let stranger: Tenant;

interface UnitSpec {
  aspect: string | null;
  terms?: string[] | null;
  label?: "negative" | "positive" | "neutral";
  kind?: "opinion" | "request" | "bug" | "question";
  comparedWith?: string | null;
  churn?: boolean;
}
interface SourceSpec {
  entityId?: string;
  workspaceId?: string;
  platform?: string;
  kind?: string;
  metadata?: Record<string, unknown>;
}

async function store(spec: SourceSpec, units: UnitSpec[]): Promise<string> {
  const id = randomUUID();
  const entityId = spec.entityId ?? tenant.entityId;
  await h.deps.db.content.create({
    data: {
      id,
      entityId,
      workspaceId: spec.workspaceId ?? tenant.workspaceId,
      kind: spec.kind ?? "source",
      platform: spec.platform ?? "reddit",
      content: `source ${id}`,
      contentHash: id,
      dedupKey: id,
      ...(spec.metadata ? { metadata: spec.metadata as Prisma.InputJsonValue } : {}),
    },
  });
  if (units.length > 0) {
    await h.deps.db.opinionUnit.createMany({
      data: units.map((u, i) => ({
        contentId: id,
        entityId,
        startOffset: i * 10,
        endOffset: i * 10 + 5,
        text: "a unit",
        aspect: u.aspect,
        sentimentLabel: u.label ?? "neutral",
        kind: u.kind ?? "opinion",
        terms: u.terms ?? [],
        comparedWith: u.comparedWith ?? null,
        churn: u.churn ?? false,
      })),
    });
    // Prisma writes [] for a missing list; the column also allows null.
    const nullTerms = units.flatMap((u, i) => (u.terms === null ? [i * 10] : []));
    if (nullTerms.length > 0)
      await h.deps.db
        .$executeRaw`UPDATE opinion_units SET terms = NULL WHERE content_id = ${id}::uuid AND start_offset = ANY(${nullTerms}::int[])`;
  }
  return id;
}

const scopeOf = (
  t: Tenant,
  options: { entityId?: string | null; projectId?: string | null; searchMode?: SearchMode; platforms?: string[]; provided?: string[] } = {},
) =>
  resolveScope(h.deps.db, {
    userId: t.userId,
    workspaceId: t.workspaceId,
    entityId: options.entityId === undefined ? t.entityId : options.entityId,
    projectId: options.projectId ?? null,
    searchMode: options.searchMode,
    platforms: options.platforms ?? [],
    providedSources: options.provided ?? [],
  });
const themesOf = (aspects: string[]) => aspects.map((aspect) => ({ aspect }) as Theme);
const focusOn = (ask: Focus["ask"] | null) => (ask ? ({ ask } as Focus) : null);
const counts = (complaint: number, praise: number, request: number, neutral: number): ScopeCounts => ({
  complaint,
  praise,
  request,
  neutral,
});

beforeAll(async () => {
  h = await createHarness();
  tenant = await createTenant(h, "Acme Notes");
  otherEntity = await addEntity(h, tenant, "Initech Notes");
  stranger = await createTenant(h, "Hooli");
});
afterAll(async () => {
  await h.close();
});

describe("counts over every stored source in scope, worked out by hand", () => {
  beforeAll(async () => {
    await store({}, [
      { aspect: "sync", label: "negative" },
      { aspect: "sync", label: "positive" },
    ]); // complains and praises
    await store({}, [{ aspect: "pricing", terms: ["pricing", "sync"], label: "negative" }]); // sync through its terms
    await store({}, [{ aspect: "sync", label: "neutral" }]); // takes no side
    await store({ platform: "github" }, [{ aspect: "sync", kind: "bug", label: "neutral" }]); // a bug is a complaint
    await store({}, [
      { aspect: "sync", kind: "request" },
      { aspect: "sync", label: "positive", terms: null },
    ]);
    await store({}, [{ aspect: null, terms: ["sync"], label: "positive", comparedWith: "Evernote" }]);
    await store({}, [{ aspect: "sync", label: "negative", churn: true }]);
    await store({}, [{ aspect: "sync", label: "negative", comparedWith: "Notion" }]);
    await store({}, [
      { aspect: "sync", kind: "question" },
      { aspect: "editor", label: "positive" },
    ]); // a question takes no side
    await store({ platform: "slack" }, [{ aspect: "sync", label: "positive" }]); // first-party
    // Never counted for the entity: not evidence, another entity, another workspace.
    await store({ kind: "summary" }, [{ aspect: "sync", label: "negative" }]);
    await store({ metadata: { kind: "meeting_note" } }, [{ aspect: "sync", label: "negative" }]);
    await store({ entityId: otherEntity }, [{ aspect: "sync", label: "negative" }]);
    await store({ entityId: stranger.entityId, workspaceId: stranger.workspaceId }, [{ aspect: "sync", label: "negative" }]);
  });

  it("counts distinct sources per side of each theme's aspect; themes sharing an aspect share the count", async () => {
    const themes = themesOf(["sync", "sync", "pricing", "editor", "battery", "recurring reminders"]);
    const got = await scopeCounts(h.deps.db, await scopeOf(tenant), themes, null, new Set(["recurring reminders"]));
    expect(Object.fromEntries(got)).toEqual({
      0: counts(5, 4, 1, 2),
      1: counts(5, 4, 1, 2),
      2: counts(1, 0, 0, 0),
      3: counts(0, 1, 0, 0),
    });
  });

  it("counts only the units of the asked kind for a focused question", async () => {
    const scope = await scopeOf(tenant);
    const sync = async (ask: Focus["ask"]) => (await scopeCounts(h.deps.db, scope, themesOf(["sync"]), focusOn(ask), new Set())).get(0);
    expect(await sync("requests")).toEqual(counts(0, 0, 1, 0));
    expect(await sync("bugs")).toEqual(counts(1, 0, 0, 0));
    expect(await sync("churn")).toEqual(counts(2, 0, 0, 0));
    expect(await sync("comparison")).toEqual(counts(1, 1, 0, 0));
    expect((await scopeCounts(h.deps.db, scope, themesOf(["editor"]), focusOn("requests"), new Set())).size).toBe(0);
  });

  it("follows the scope: platforms, first-party sources, the workspace, provided sources", async () => {
    const sync = async (scope: AnalysisScope) => (await scopeCounts(h.deps.db, scope, themesOf(["sync"]), null, new Set())).get(0);
    expect(await sync(await scopeOf(tenant, { searchMode: "web_only" }))).toEqual(counts(5, 3, 1, 2));
    expect(await sync(await scopeOf(tenant, { platforms: ["github"] }))).toEqual(counts(1, 0, 0, 0));
    expect(await sync(await scopeOf(tenant, { entityId: null }))).toEqual(counts(6, 4, 1, 2));
    expect(await sync(await scopeOf(stranger))).toEqual(counts(1, 0, 0, 0));
    const provided = await scopeOf(tenant, { provided: [randomUUID()] });
    expect((await scopeCounts(h.deps.db, provided, themesOf(["sync"]), null, new Set())).size).toBe(0);
  });
});

/** The statement scope-counts.ts ran before the one-pass rewrite: one branch per theme, as it was. */
async function perThemeCounts(scope: AnalysisScope, themes: Theme[], focus: Focus | null): Promise<Map<number, ScopeCounts>> {
  const side = {
    complaint: Prisma.sql`u.kind <> 'request' AND (u.kind = 'bug' OR u.sentiment_label = 'negative')`,
    praise: Prisma.sql`u.kind NOT IN ('request', 'bug') AND u.sentiment_label = 'positive'`,
    request: Prisma.sql`u.kind = 'request'`,
  };
  const focusSql = !focus
    ? Prisma.sql`TRUE`
    : focus.ask === "requests"
      ? Prisma.sql`u.kind = 'request'`
      : focus.ask === "bugs"
        ? Prisma.sql`u.kind = 'bug'`
        : focus.ask === "churn"
          ? Prisma.sql`(u.churn OR (u.compared_with IS NOT NULL AND u.sentiment_label = 'negative'))`
          : focus.ask === "comparison"
            ? Prisma.sql`u.compared_with IS NOT NULL`
            : Prisma.sql`TRUE`;
  const branches = themes.map(
    (t, i) => Prisma.sql`SELECT ${i}::int AS i, u.content_id,
        (${side.complaint}) AS complaint, (${side.praise}) AS praise, (${side.request}) AS request
      FROM opinion_units u JOIN content_store c ON c.id = u.content_id
      WHERE ${scopeCondition(scope)} AND (u.aspect = ${t.aspect} OR ${t.aspect} = ANY(u.terms)) AND ${focusSql}`,
  );
  const rows = await h.deps.db.$queryRaw<{ i: number; complaint: bigint; praise: bigint; request: bigint; neutral: bigint }[]>`
    SELECT s.i, count(*) FILTER (WHERE s.complaint) AS complaint, count(*) FILTER (WHERE s.praise) AS praise,
      count(*) FILTER (WHERE s.request) AS request, count(*) FILTER (WHERE NOT (s.complaint OR s.praise OR s.request)) AS neutral
    FROM (SELECT x.i, x.content_id, bool_or(x.complaint) AS complaint, bool_or(x.praise) AS praise, bool_or(x.request) AS request
          FROM (${Prisma.join(branches, " UNION ALL ")}) x GROUP BY x.i, x.content_id) s
    GROUP BY s.i`;
  return new Map(rows.map((r) => [Number(r.i), counts(Number(r.complaint), Number(r.praise), Number(r.request), Number(r.neutral))]));
}

describe("the one-pass statement and the roll-ups answer what the per-theme statement answered", () => {
  let random: Tenant;
  let sibling: string;
  let outside: string;
  const ASPECTS = ["sync", "pricing", "editor", "support", "search", "offline mode", "overall", "acme notes"];

  beforeAll(async () => {
    random = await createTenant(h, "Random Notes");
    sibling = await addEntity(h, random, "Random Notes Mobile", random.projectId);
    outside = (await createEntity(h, random.token, { name: "Random Elsewhere", workspace_id: random.workspaceId })).id;
    // A seeded generator (Mulberry32), so every run stores the same corpus.
    let seed = 20261127;
    const next = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
    for (let n = 0; n < 240; n++) {
      const units = Array.from({ length: Math.floor(next() * 5) }, () => ({
        aspect: next() < 0.1 ? null : pick(ASPECTS),
        terms: next() < 0.05 ? null : ASPECTS.filter(() => next() < 0.15),
        label: pick(["negative", "positive", "neutral"] as const),
        kind: pick(["opinion", "opinion", "opinion", "request", "bug", "question"] as const),
        comparedWith: next() < 0.15 ? "Notion" : null,
        churn: next() < 0.1,
      }));
      await store(
        {
          entityId: pick([random.entityId, random.entityId, random.entityId, sibling, outside]),
          workspaceId: random.workspaceId,
          platform: pick(["reddit", "hackernews", "github", "web", "slack", "meetingnotes"]),
          kind: next() < 0.05 ? "summary" : pick(["source", "comment"]),
          ...(next() < 0.05 ? { metadata: { kind: "meeting_note" } } : next() < 0.1 ? { metadata: { kind: "other" } } : {}),
        },
        units,
      );
    }
  });

  async function expectSameCounts() {
    const scopes = await Promise.all([
      scopeOf(random),
      scopeOf(random, { entityId: null }),
      scopeOf(random, { entityId: null, projectId: random.projectId }),
      scopeOf(random, { searchMode: "web_only" }),
      scopeOf(random, { searchMode: "knowledge" }),
      scopeOf(random, { platforms: ["github", "news"] }),
    ]);
    const themes = themesOf([...ASPECTS, "sync", "pricing", "battery"]);
    let compared = 0;
    for (const scope of scopes)
      for (const ask of [null, "requests", "bugs", "churn", "comparison"] as const) {
        const want = await perThemeCounts(scope, themes, focusOn(ask));
        const got = await scopeCounts(h.deps.db, scope, themes, focusOn(ask), new Set());
        expect(Object.fromEntries(got), `${JSON.stringify(scope.describe)} ${ask}`).toEqual(Object.fromEntries(want));
        compared += want.size;
      }
    // The corpus is not trivially empty on any side.
    expect(compared).toBeGreaterThan(200);
  }

  it("for every focus and every kind of scope", async () => {
    // The scopes of whole entities are answered from opinion_source_rollups, the others from the units.
    await expectSameCounts();
  });

  it("and so do the roll-ups after units are added to originals that have some, changed, and removed in part or in whole", async () => {
    const ids = (
      await h.deps.db.$queryRaw<{ id: string; entity_id: string }[]>`
      SELECT c.id, c.entity_id FROM content_store c WHERE c.workspace_id = ${random.workspaceId}::uuid
        AND EXISTS (SELECT 1 FROM opinion_units u WHERE u.content_id = c.id) ORDER BY c.id`
    ).map((r) => ({
      id: r.id,
      entityId: r.entity_id,
    }));
    expect(ids.length).toBeGreaterThan(100);
    // More units for originals that have some (each statement: several originals, one of them new to units).
    const fresh = await store({ entityId: random.entityId, workspaceId: random.workspaceId, platform: "reddit" }, []);
    await h.deps.db.opinionUnit.createMany({
      data: [...ids.slice(0, 30), { id: fresh, entityId: random.entityId }].map((c, k) => ({
        contentId: c.id,
        entityId: c.entityId,
        startOffset: 10_000 + k,
        endOffset: 10_001 + k,
        text: "more",
        aspect: k % 3 === 0 ? "battery" : "sync",
        terms: k % 2 === 0 ? ["pricing"] : [],
        sentiment: k % 2 === 0 ? -0.5 : 0.5,
        sentimentLabel: k % 2 === 0 ? "negative" : "positive",
        kind: k % 5 === 0 ? "request" : "opinion",
        analyserVersion: 4,
      })),
    });
    await expectSameCounts();
    // Units change aspect, side and kind, and one moves to another original.
    await h.deps.db.$executeRaw`
      UPDATE opinion_units SET aspect = 'editor', sentiment_label = 'positive', kind = 'opinion'
      WHERE content_id = ANY(${ids.slice(30, 50).map((c) => c.id)}::uuid[]) AND start_offset = 0`;
    await h.deps.db.$executeRaw`
      UPDATE opinion_units SET content_id = ${ids[51]!.id}::uuid, entity_id = ${ids[51]!.entityId}::uuid, start_offset = 20000
      WHERE content_id = ${ids[52]!.id}::uuid AND start_offset = 0`;
    await expectSameCounts();
    // Some units of originals, then every unit of others (as a deletion removes them before their originals).
    await h.deps.db.$executeRaw`
      DELETE FROM opinion_units WHERE content_id = ANY(${ids.slice(60, 80).map((c) => c.id)}::uuid[]) AND start_offset = 0`;
    await expectSameCounts();
    await h.deps.db.$executeRaw`DELETE FROM opinion_units WHERE content_id = ANY(${ids.slice(80, 100).map((c) => c.id)}::uuid[])`;
    await h.deps.db.$executeRaw`DELETE FROM content_store WHERE id = ANY(${ids.slice(80, 100).map((c) => c.id)}::uuid[])`;
    await expectSameCounts();
  });

  it("the stored originals per platform of whole entities are the sums of content_count_deltas, through stores, moves and removals", async () => {
    const entities = [random.entityId, sibling, outside];
    const counted = () => h.deps.db.$queryRaw<{ entity_id: string; platform: string; n: number }[]>`
      SELECT c.entity_id::text, c.platform, count(*)::int AS n FROM content_store c
      WHERE c.entity_id = ANY(${entities}::uuid[]) AND ${evidenceRowCondition()}
      GROUP BY 1, 2 ORDER BY 1, 2`;
    const summed = () => h.deps.db.$queryRaw<{ entity_id: string; platform: string; n: number }[]>`
      SELECT d.entity_id::text, d.platform, sum(d.delta)::int AS n FROM content_count_deltas d
      WHERE d.entity_id = ANY(${entities}::uuid[]) GROUP BY 1, 2 HAVING sum(d.delta) <> 0 ORDER BY 1, 2`;
    const expectSame = async () => {
      const want = await counted();
      expect(want.length).toBeGreaterThan(5);
      expect(await summed()).toEqual(want);
    };
    await expectSame();
    const rows = await h.deps.db.$queryRaw<{ id: string }[]>`
      SELECT id FROM content_store WHERE entity_id = ANY(${entities}::uuid[]) ORDER BY id LIMIT 30`;
    const at = (from: number, to: number) => rows.slice(from, to).map((r) => r.id);
    // Rows change platform, entity, kind (a summary is no evidence) and metadata kind (a meeting note's own row).
    await h.deps.db.$executeRaw`UPDATE content_store SET platform = 'web' WHERE id = ANY(${at(0, 5)}::uuid[])`;
    await h.deps.db.$executeRaw`UPDATE content_store SET entity_id = ${sibling}::uuid WHERE id = ANY(${at(5, 8)}::uuid[])`;
    await h.deps.db.$executeRaw`UPDATE content_store SET kind = 'summary' WHERE id = ANY(${at(8, 11)}::uuid[])`;
    await h.deps.db.$executeRaw`UPDATE content_store SET metadata = '{"kind": "meeting_note"}' WHERE id = ANY(${at(11, 13)}::uuid[])`;
    // Enrichment's columns change nothing counted.
    await h.deps.db.$executeRaw`
      INSERT INTO content_enrichment (content_id, entity_id, platform, created_at, feedback_kind, enriched_at)
      SELECT id, entity_id, platform, created_at, 'other', now() FROM content_store WHERE id = ANY(${at(13, 20)}::uuid[])
      ON CONFLICT (content_id) DO UPDATE SET feedback_kind = EXCLUDED.feedback_kind, enriched_at = EXCLUDED.enriched_at`;
    await expectSame();
    await h.deps.db.$executeRaw`DELETE FROM content_store WHERE id = ANY(${at(20, 30)}::uuid[])`;
    await expectSame();
    // Folding an entity's rows keeps its sums.
    await h.deps.db.$executeRaw`SELECT content_count_deltas_compact(${random.entityId}::uuid)`;
    await expectSame();
    const folded = await h.deps.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM content_count_deltas WHERE entity_id = ${random.entityId}::uuid`;
    const platforms = await h.deps.db.$queryRaw<{ n: number }[]>`
      SELECT count(DISTINCT platform)::int AS n FROM content_store c WHERE c.entity_id = ${random.entityId}::uuid AND ${evidenceRowCondition()}`;
    expect(folded).toEqual(platforms);
  });
});
