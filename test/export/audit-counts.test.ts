import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { addEntity, createTenant, type Tenant } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { seeded } from "../helpers/random.js";

/**
 * The completeness audit's counts come from content_count_deltas (migration 20261130100000_content_audit_deltas),
 * kept by triggers on content_store, content_enrichment and opinion_units. On real PostgreSQL, a random corpus
 * goes through what the service and an operator can do to it (stores of sources, comments, summaries, empty
 * texts and rows without a URL; enrichment written, rewritten and removed; units added, re-written, moved and
 * removed in part and in whole; rows moved, with their enrichment; rows deleted with and without their units
 * first; a fold; emptying the units and the enrichment tables), and after each step the sums must equal a count
 * of the rows themselves, by the audit's own rules.
 */
let h: Harness;
let tenant: Tenant;
let sibling: string;

// Deterministic, so a failure can be replayed.
const { rand, pick } = seeded(20261130);

interface Counts {
  entity_id: string;
  platform: string;
  rows: number;
  comments: number;
  with_text: number;
  with_url: number;
  with_embedding: number;
  with_opinion_units: number;
  with_enrichment: number;
  evidence: number;
}

/** The audit's rules over the rows themselves (the statement the audit ran before the deltas). */
const counted = (entities: string[]) => h.deps.db.$queryRaw<Counts[]>`
  SELECT c.entity_id::text, c.platform,
    count(*)::int AS rows,
    count(*) FILTER (WHERE c.kind = 'comment')::int AS comments,
    count(*) FILTER (WHERE c.content ~ '[^[:space:]]')::int AS with_text,
    count(*) FILTER (WHERE c.url <> '')::int AS with_url,
    count(*) FILTER (WHERE coalesce(cardinality(e.embedding), 0) > 0)::int AS with_embedding,
    count(*) FILTER (WHERE ou.has)::int AS with_opinion_units,
    count(*) FILTER (WHERE coalesce(cardinality(e.embedding), 0) > 0 AND (ou.has OR e.enriched_at IS NOT NULL))::int AS with_enrichment,
    count(*) FILTER (WHERE c.kind <> 'summary' AND coalesce(c.metadata->>'kind', '') <> 'meeting_note')::int AS evidence
  FROM content_store c
  LEFT JOIN content_enrichment e ON e.content_id = c.id
  LEFT JOIN LATERAL (SELECT true AS has FROM opinion_units o WHERE o.content_id = c.id LIMIT 1) ou ON true
  WHERE c.entity_id = ANY(${entities}::uuid[])
  GROUP BY 1, 2 ORDER BY 1, 2`;

const summed = (entities: string[]) => h.deps.db.$queryRaw<Counts[]>`
  SELECT d.entity_id::text, d.platform,
    sum(d.rows)::int AS rows, sum(d.comments)::int AS comments, sum(d.with_text)::int AS with_text,
    sum(d.with_url)::int AS with_url, sum(d.with_embedding)::int AS with_embedding,
    sum(d.with_units)::int AS with_opinion_units, sum(d.with_enrichment)::int AS with_enrichment,
    sum(d.delta)::int AS evidence
  FROM content_count_deltas d
  WHERE d.entity_id = ANY(${entities}::uuid[])
  GROUP BY 1, 2 HAVING sum(d.rows) <> 0 ORDER BY 1, 2`;

const entities = () => [tenant.entityId, sibling];
async function expectSame(step: string) {
  const want = await counted(entities());
  expect(want.length, step).toBeGreaterThan(2);
  expect(await summed(entities()), step).toEqual(want);
}

/**
 * Writes enrichment for the rows as enrichment and an older enrichment did: a new row, or the one there replaced.
 * `enrichedAt` null is an embedding without enriched_at (an older enrichment).
 */
async function enrich(ids: string[], embedding: number[], enrichedAt: Date | null) {
  await h.deps.db.$executeRaw`
    INSERT INTO content_enrichment (content_id, entity_id, platform, created_at, embedding, embedding_model, enriched_at)
    SELECT id, entity_id, platform, created_at, ${embedding}::real[], 'hash-2', ${enrichedAt}::timestamptz
    FROM content_store WHERE id = ANY(${ids}::uuid[])
    ON CONFLICT (content_id) DO UPDATE SET embedding = EXCLUDED.embedding, enriched_at = EXCLUDED.enriched_at`;
}

async function storeRandom(n: number): Promise<void> {
  const arrived: { id: string; enrichedAt: Date | null }[] = [];
  const rows = Array.from({ length: n }, () => {
    const id = randomUUID();
    const kind = pick(["source", "source", "comment", "summary"]);
    return {
      id,
      entityId: pick(entities()),
      workspaceId: tenant.workspaceId,
      kind,
      platform: pick(["reddit", "github", "web"]),
      content: pick(["the sync is slow", "  \n ", "", "great editor"]),
      url: pick(["https://e.com/x", ""]),
      contentHash: id,
      dedupKey: id,
      ...(rand() < 0.1 ? { metadata: { kind: "meeting_note" } } : {}),
    };
  });
  // Some rows arrive with an embedding already (an import of enriched rows).
  for (const row of rows) if (rand() < 0.1) arrived.push({ id: row.id, enrichedAt: rand() < 0.5 ? new Date() : null });
  await h.deps.db.content.createMany({ data: rows });
  for (const at of [null, "now"]) {
    const ids = arrived.filter((a) => (a.enrichedAt === null) === (at === null)).map((a) => a.id);
    if (ids.length > 0) await enrich(ids, [0.1, 0.2], at === null ? null : new Date());
  }
}

const someIds = async (n: number) =>
  (
    await h.deps.db.$queryRaw<{ id: string }[]>`
      SELECT id FROM content_store WHERE entity_id = ANY(${entities()}::uuid[]) ORDER BY md5(id::text || ${String(rand())}) LIMIT ${n}`
  ).map((r) => r.id);

async function addUnits(ids: string[]) {
  const rows = await h.deps.db.content.findMany({ where: { id: { in: ids } }, select: { id: true, entityId: true } });
  await h.deps.db.opinionUnit.createMany({
    data: rows.flatMap((r) =>
      Array.from({ length: 1 + Math.floor(rand() * 3) }, () => ({
        contentId: r.id,
        entityId: r.entityId,
        startOffset: Math.floor(rand() * 1_000_000),
        endOffset: 1_000_001,
        text: "a unit",
      })),
    ),
    skipDuplicates: true,
  });
}

beforeAll(async () => {
  h = await createHarness();
  tenant = await createTenant(h, "Audit Notes");
  sibling = await addEntity(h, tenant, "Audit Notes Pro");
  await runAdminCommand(h.deps, ["enable-raw-export", tenant.sub]);
});
afterAll(() => h.close());

describe("the audit's counts in content_count_deltas", () => {
  it("equal a count of the rows after every kind of write", async () => {
    await storeRandom(120);
    await expectSame("stored");

    // Enrichment: one statement writes a chunk's embeddings and enriched_at, then the units.
    const chunk = await someIds(40);
    await enrich(chunk, [0.5, 0.5], new Date());
    await addUnits(chunk.slice(0, 30));
    await expectSame("enriched");

    // Units for rows with an embedding but no enriched_at (an older enrichment), and for rows without any.
    await addUnits(await someIds(25));
    await expectSame("units added, some to rows that had units");

    // A re-enrichment: all of some rows' units deleted and written again in one transaction.
    const again = chunk.slice(0, 10);
    await h.deps.db.$transaction([
      h.deps.db.opinionUnit.deleteMany({ where: { contentId: { in: again } } }),
      h.deps.db.contentEnrichment.updateMany({ where: { contentId: { in: again } }, data: { enrichedAt: null } }),
    ]);
    await expectSame("units removed in whole, enriched_at cleared");
    await addUnits(again.slice(0, 5));
    await expectSame("units written again");

    // Rows with units and an embedding but no enriched_at (an older enrichment), then enriched, then not: the
    // units decide "with enrichment" on one side of each update.
    const older = await someIds(12);
    await addUnits(older.slice(0, 8));
    await enrich(older, [0.1], null);
    await expectSame("embedded without enriched_at, some with units");
    await h.deps.db.$executeRaw`UPDATE content_enrichment SET enriched_at = now() WHERE content_id = ANY(${older}::uuid[])`;
    await expectSame("enriched_at set on embedded rows with and without units");
    await h.deps.db
      .$executeRaw`UPDATE content_enrichment SET enriched_at = NULL, embedding = NULL WHERE content_id = ANY(${older.slice(4, 8)}::uuid[])`;
    await expectSame("embedding and enriched_at taken away");
    await h.deps.db.$executeRaw`DELETE FROM content_enrichment WHERE content_id = ANY(${older.slice(8)}::uuid[])`;
    await expectSame("enrichment rows deleted, with and without units");
    await enrich(older.slice(8), [0.2], null);
    await expectSame("embedded again without enriched_at");
    // A text changed in place (blank and back), and a row moved that has units.
    await h.deps.db.$executeRaw`UPDATE content_store SET content = '  ' WHERE id = ${older[0]}::uuid`;
    await expectSame("text blanked in place");
    await h.deps.db.$executeRaw`UPDATE content_store SET content = 'words again' WHERE id = ${older[0]}::uuid`;
    await expectSame("text written again in place");
    await h.deps.db.$executeRaw`UPDATE content_store SET entity_id = ${sibling}::uuid WHERE id = ${older[1]}::uuid`;
    await expectSame("a row with units moved to another entity");

    // Part of some rows' units removed; units moved from one original to another.
    await h.deps.db.$executeRaw`
      DELETE FROM opinion_units WHERE id IN (SELECT id FROM opinion_units WHERE entity_id = ANY(${entities()}::uuid[]) ORDER BY id LIMIT 15)`;
    await expectSame("units removed in part");
    const [from, to] = await someIds(2);
    await h.deps.db.$executeRaw`UPDATE opinion_units SET content_id = ${to}::uuid WHERE content_id = ${from}::uuid`;
    await expectSame("units moved");

    // An embedding taken away, a text emptied, a URL added, an enriched row moved to another platform and entity.
    const [a, b, c, d] = await someIds(4);
    await enrich([a!, c!], [0.3, 0.3], new Date());
    await expectSame("two more enriched");
    await h.deps.db.$executeRaw`UPDATE content_enrichment SET embedding = '{}' WHERE content_id = ${a}::uuid`;
    await h.deps.db.$executeRaw`UPDATE content_store SET content = ' ', url = 'https://e.com/new' WHERE id = ${b}::uuid`;
    await h.deps.db
      .$executeRaw`UPDATE content_store SET platform = 'hackernews', entity_id = ${sibling}::uuid, created_at = created_at - interval '1 day' WHERE id = ${c}::uuid`;
    await h.deps.db.$executeRaw`UPDATE content_store SET kind = 'summary' WHERE id = ${d}::uuid`;
    await expectSame("rows rewritten");
    // The moved row's enrichment follows it.
    const [moved] = await h.deps.db.$queryRaw<{ same: boolean }[]>`
      SELECT (e.entity_id, e.platform, e.created_at) = (c.entity_id, c.platform, c.created_at) AS same
      FROM content_store c JOIN content_enrichment e ON e.content_id = c.id WHERE c.id = ${c}::uuid`;
    expect(moved).toEqual({ same: true });

    // Deletions: units first (as the service deletes), and a raw delete that leaves the units behind.
    // Some of them enriched, so their enrichment rows go by the foreign key's cascade.
    const gone = [...(await someIds(6)), ...chunk.slice(30, 34)];
    await h.deps.db.$transaction([
      h.deps.db.opinionUnit.deleteMany({ where: { contentId: { in: gone.slice(0, 5) } } }),
      h.deps.db.content.deleteMany({ where: { id: { in: gone.slice(0, 5) } } }),
    ]);
    await expectSame("deleted with their units first");
    await h.deps.db.content.deleteMany({ where: { id: { in: gone.slice(5) } } });
    await expectSame("deleted, units left behind");
    await h.deps.db.opinionUnit.deleteMany({ where: { contentId: { in: gone.slice(5) } } });
    await expectSame("the orphaned units removed");

    // A fold keeps every sum, in one row per platform.
    await h.deps.db.$executeRaw`SELECT content_count_deltas_compact(${tenant.entityId}::uuid)`;
    await expectSame("folded");
    const [folded] = await h.deps.db.$queryRaw<{ rows: number; platforms: number }[]>`
      SELECT (SELECT count(*)::int FROM content_count_deltas WHERE entity_id = ${tenant.entityId}::uuid) AS rows,
             (SELECT count(DISTINCT platform)::int FROM content_store WHERE entity_id = ${tenant.entityId}::uuid) AS platforms`;
    expect(folded!.rows).toBe(folded!.platforms);

    // Emptying the units table, then the enrichment table.
    await h.deps.db.$executeRawUnsafe("TRUNCATE opinion_units");
    await expectSame("units truncated");
    await h.deps.db.$executeRawUnsafe("TRUNCATE content_enrichment");
    await expectSame("enrichment truncated");
  });

  it("answer the audit endpoint's counts without reading the rows", async () => {
    const token = tenant.token;
    const res = await h.http.get(`/agent/v1/export/completeness?entity_id=${tenant.entityId}`).set({ authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    const want = (await counted([tenant.entityId])).map((r) => [r.platform, r.rows, r.with_text, r.with_enrichment]);
    const got = (res.body.entities[0].platforms as { platform: string; rows: number; with_text: number; with_enrichment: number }[])
      .filter((p) => p.rows > 0)
      .map((p) => [p.platform, p.rows, p.with_text, p.with_enrichment]);
    expect(got).toEqual(want);
  });
});
