import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aspectCounts, edgeDays, platformCounts, type Windows } from "../../src/insights/intelligence/sql.js";
import { addEntity, createTenant, type Tenant } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { seeded } from "../helpers/random.js";

/**
 * The intelligence summary's window counts come from per-day roll-ups (opinion_rollups, content_day_deltas)
 * for the days wholly inside a window, and from the rows of the three days the windows cut, each cut day
 * counted in its shorter part with the other part taken as the day's roll-up less it (edgeDays). On real
 * PostgreSQL, a corpus spread over 40 days at every time of day (a few originals dated after the window's
 * end), and windows of 1, 7 and 15 days ending early and late in a UTC day (both ways of cutting), must
 * give exactly what a count of the rows and units themselves gives; also after originals are deleted.
 */
let h: Harness;
let tenant: Tenant;
let rival: string;

// Deterministic, so a failure can be replayed.
const { rand, pick } = seeded(7);
const BASE = Date.UTC(2026, 9, 1);
const DAY = 86_400_000;

async function seedCorpus() {
  const rows = Array.from({ length: 400 }, () => {
    const id = randomUUID();
    // Up to 40 days after BASE, at any second of the day; a tenth without a publication date (seen when stored).
    const at = new Date(BASE + Math.floor(rand() * 40 * DAY));
    const published = rand() < 0.9;
    return {
      id,
      entityId: rand() < 0.8 ? tenant.entityId : rival,
      workspaceId: tenant.workspaceId,
      kind: pick(["source", "source", "comment", "summary"]),
      platform: pick(["reddit", "github", "web"]),
      content: "the sync is slow and pricing is steep",
      contentHash: id,
      dedupKey: id,
      publishedAt: published ? at : null,
      createdAt: at,
    };
  });
  await h.deps.db.content.createMany({ data: rows });
  await h.deps.db.opinionUnit.createMany({
    data: rows.flatMap((r) =>
      Array.from({ length: Math.floor(rand() * 3) }, (_, i) => ({
        contentId: r.id,
        entityId: r.entityId,
        startOffset: i * 10,
        endOffset: i * 10 + 4,
        text: "unit",
        aspect: pick(["sync", "pricing", null]),
        sentimentLabel: pick(["negative", "positive", "neutral"]),
        kind: pick(["opinion", "opinion", "request", "bug"]),
      })),
    ),
  });
}

const windowsOf = (days: number, end: Date): Windows => ({
  end,
  currentStart: new Date(end.getTime() - days * DAY),
  previousStart: new Date(end.getTime() - 2 * days * DAY),
});

/** What the two windows hold, counted from the rows themselves. */
const platformsCounted = (w: Windows) => h.deps.db.$queryRaw<{ platform: string; current: boolean; sources: number; comments: number }[]>`
  SELECT c.platform, coalesce(c.published_at, c.created_at) >= ${w.currentStart}::timestamptz AS current,
    count(*) FILTER (WHERE c.kind <> 'comment')::int AS sources, count(*) FILTER (WHERE c.kind = 'comment')::int AS comments
  FROM content_store c
  WHERE c.entity_id = ${tenant.entityId}::uuid AND coalesce(c.published_at, c.created_at) >= ${w.previousStart}::timestamptz
    AND coalesce(c.published_at, c.created_at) < ${w.end}::timestamptz
  GROUP BY 1, 2 ORDER BY 1, 2`;

const aspectsCounted = (w: Windows) => h.deps.db.$queryRaw<Row[]>`
  SELECT u.entity_id::text, u.seen_at >= ${w.currentStart}::timestamptz AS current, k.level, k.aspect, k.side,
    count(*)::int AS statements, count(DISTINCT u.content_id)::int AS sources
  FROM opinion_units u
  CROSS JOIN LATERAL opinion_unit_keys(u.seen_at, u.aspect, u.sentiment_label, u.kind, u.analyser_version) k
  WHERE u.entity_id = ANY(${[tenant.entityId, rival]}::uuid[]) AND u.seen_at >= ${w.previousStart}::timestamptz
    AND u.seen_at < ${w.end}::timestamptz
  GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`;

interface Row {
  entity_id: string;
  current: boolean;
  level: number;
  aspect: string;
  side: string;
  statements: number;
  sources: number;
}
const sorted = <T extends object>(rows: T[]) =>
  rows.map((r) => JSON.parse(JSON.stringify(r)) as T).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

async function expectExact(w: Windows, what: string) {
  const platforms = await platformCounts(h.deps.db, tenant.entityId, w);
  expect(sorted(platforms), `${what}: platforms`).toEqual(sorted(await platformsCounted(w)));
  const aspects = (await aspectCounts(h.deps.db, [tenant.entityId, rival], w)).map((r) => ({ ...r, entity_id: String(r.entity_id) }));
  const want = await aspectsCounted(w);
  expect(want.length, what).toBeGreaterThan(10);
  expect(sorted(aspects), `${what}: aspects`).toEqual(sorted(want));
}

beforeAll(async () => {
  h = await createHarness();
  tenant = await createTenant(h, "Window Notes");
  rival = await addEntity(h, tenant, "Window Rival");
  await seedCorpus();
});
afterAll(() => h.close());

describe("window counts from day roll-ups and the cut days", () => {
  it("cut each day at its shorter part, both ways", () => {
    const early = edgeDays(windowsOf(7, new Date(Date.UTC(2026, 9, 30, 3))));
    expect(early.map((e) => [e.counted, e.other])).toEqual([
      [null, "previous"],
      ["previous", "current"],
      ["current", null],
    ]);
    expect(early.every((e) => e.to.getTime() - e.from.getTime() === 3 * 3_600_000)).toBe(true);
    const late = edgeDays(windowsOf(7, new Date(Date.UTC(2026, 9, 30, 20))));
    expect(late.map((e) => [e.counted, e.other])).toEqual([
      ["previous", null],
      ["current", "previous"],
      [null, "current"],
    ]);
    expect(late.every((e) => e.to.getTime() - e.from.getTime() === 4 * 3_600_000)).toBe(true);
  });

  it("equal a count of the rows and units for windows ending early and late in a day", async () => {
    for (const days of [1, 7, 15]) {
      for (const hour of [3, 20]) {
        // Windows ending inside the corpus: its last days are then dated after the windows' end.
        await expectExact(windowsOf(days, new Date(Date.UTC(2026, 9, 33, hour, 17))), `${days} days ending ${hour}:17`);
      }
    }
  });

  it("stay exact after originals and units are deleted", async () => {
    const gone = await h.deps.db.$queryRaw<{ id: string }[]>`
      SELECT id FROM content_store WHERE entity_id = ${tenant.entityId}::uuid ORDER BY md5(id::text) LIMIT 60`;
    const ids = gone.map((r) => r.id);
    await h.deps.db.$transaction([
      h.deps.db.opinionUnit.deleteMany({ where: { contentId: { in: ids } } }),
      h.deps.db.content.deleteMany({ where: { id: { in: ids } } }),
    ]);
    await expectExact(windowsOf(7, new Date(Date.UTC(2026, 9, 30, 20, 5))), "after deletions");
    await h.deps.db.$executeRaw`SELECT content_day_deltas_compact(${tenant.entityId}::uuid)`;
    await expectExact(windowsOf(7, new Date(Date.UTC(2026, 9, 30, 20, 5))), "after a fold");
  });
});
