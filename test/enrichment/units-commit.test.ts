import { spawnSync } from "node:child_process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmbedder } from "../../src/insights/embed/provider.js";
import { type Analyser, analyseInline } from "../../src/insights/enrichment/analyse.js";
import { dollarTag, enrichContent } from "../../src/insights/enrichment/service.js";
import { createTenant, storeSources, type Tenant } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";

// A chunk's units go to the server with the transaction's COMMIT in one message (insertUnitsAndCommit): the
// units as a dollar-quoted literal, and the entity's roll-up lock released by the server without waiting for
// this process. No workers run here, so the ingested rows wait for the enrichment these tests call.
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  h = await createHarness();
  tenant = await createTenant(h, "Commit Notes");
});
afterAll(() => h.close());

const unitsOf = async (ids: string[]) =>
  (
    await h.deps.pool.query<{ contentId: string; text: string; startOffset: number; endOffset: number }>(
      `SELECT content_id AS "contentId", text, start_offset AS "startOffset", end_offset AS "endOffset"
       FROM opinion_units WHERE content_id = ANY($1::uuid[]) ORDER BY content_id, start_offset`,
      [ids],
    )
  ).rows;

describe("a chunk's units sent with its commit", () => {
  it("keeps text that holds the literal's quoting tag verbatim", async () => {
    const contents = [
      "The $units$ export is awful and keeps failing. I love the new $units$::jsonb); COMMIT; -- tag.",
      "Sync is slow $units$$units$ and $unitsabc$ the search is great.",
    ];
    const ids = await storeSources(
      h,
      tenant,
      contents.map((content) => ({ platform: "web", content })),
    );
    const result = await enrichContent(h.deps.pool, createEmbedder(h.config), ids);
    expect(result).toMatchObject({ requested: 2, enriched: 2 });
    const units = await unitsOf(ids);
    expect(result.unitsInserted).toBe(units.length);
    expect(units.filter((u) => u.text.includes("$units$")).length).toBeGreaterThanOrEqual(3);
    const stored = await h.deps.pool.query<{ id: string; content: string }>(
      "SELECT id, content FROM content_store WHERE id = ANY($1::uuid[])",
      [ids],
    );
    const contentOf = new Map(stored.rows.map((r) => [r.id, r.content]));
    for (const unit of units) expect([...contentOf.get(unit.contentId)!].slice(unit.startOffset, unit.endOffset).join("")).toBe(unit.text);
  });

  it("quotes under a tag the text does not hold", () => {
    expect(dollarTag('[{"text":"plain"}]')).toBe("$units$");
    const text = '[{"text":"a $units$ b"}]';
    const tag = dollarTag(text);
    expect(tag).toMatch(/^\$units[0-9a-f]{12}\$$/);
    expect(text.includes(tag)).toBe(false);
  });

  it("commits nothing of the chunk when its units cannot be written", async () => {
    const ids = await storeSources(h, tenant, [
      { platform: "web", content: "The export is broken and I hate it." },
      { platform: "web", content: "Search works fine." },
    ]);
    // A unit of a kind the table refuses (its check constraint): the insert fails after the rows' update ran.
    const refused: Analyser = async (rows) =>
      (await analyseInline(rows)).map((row) => ({ ...row, spans: row.spans.map((span) => ({ ...span, kind: "nonsense" as "opinion" })) }));
    await expect(enrichContent(h.deps.pool, createEmbedder(h.config), ids, refused)).rejects.toThrow(/opinion_units_kind_check/);
    const rows = await h.deps.pool.query<{ enriched: number }>(
      "SELECT count(*) FILTER (WHERE enriched_at IS NOT NULL)::int AS enriched FROM content_store WHERE id = ANY($1::uuid[])",
      [ids],
    );
    expect(rows.rows[0]!.enriched).toBe(0);
    expect(await unitsOf(ids)).toEqual([]);
    // The same rows enrich normally afterwards: nothing was left half-written or locked.
    expect(await enrichContent(h.deps.pool, createEmbedder(h.config), ids)).toMatchObject({ enriched: 2 });
  });

  it("releases the entity's roll-up lock while this process cannot answer", async () => {
    const ids = await storeSources(h, tenant, [{ platform: "web", content: "Offline mode is unreliable and the sync fails." }]);
    // Right after the units' statement is handed to the socket, this process stops answering (a synchronous
    // child process) and the child asks for the entity's roll-up lock: it gets it only if the server has
    // committed, and so released the lock, without a word from here.
    const probe = `
      import pg from "pg";
      const client = new pg.Client({ connectionString: process.env.PROBE_DATABASE_URL });
      await client.connect();
      await client.query("BEGIN; SET LOCAL lock_timeout = '3s'");
      const started = Date.now();
      try {
        await client.query("SELECT pg_advisory_xact_lock(hashtextextended('opinion_rollups:' || $1, 0))", [process.env.PROBE_ENTITY]);
        process.stdout.write("locked after " + (Date.now() - started) + " ms");
      } catch (err) {
        process.stdout.write("not locked: " + err.message);
      }
      await client.end();
    `;
    let answer = "";
    const pool = new pg.Pool({ connectionString: h.config.DATABASE_URL, max: 2 });
    const wrapped = new WeakSet<pg.PoolClient>();
    const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
    const wrap = (client: pg.PoolClient) => {
      if (!wrapped.has(client)) {
        wrapped.add(client);
        const query = client.query.bind(client) as (...args: unknown[]) => unknown;
        client.query = ((...args: unknown[]) => {
          const pending = query(...args);
          if (typeof args[0] === "string" && args[0].includes("INSERT INTO opinion_units")) {
            const child = spawnSync(process.execPath, ["--input-type=module", "-e", probe], {
              cwd: process.cwd(),
              env: { ...process.env, PROBE_DATABASE_URL: h.config.DATABASE_URL, PROBE_ENTITY: tenant.entityId },
              encoding: "utf8",
              timeout: 20_000,
            });
            answer = `${child.stdout}${child.stderr}`;
          }
          return pending;
        }) as typeof client.query;
      }
      return client;
    };
    // pool.query checks a client out through connect with a callback; poolTransaction awaits it.
    pool.connect = ((callback?: (err: Error | undefined, client?: pg.PoolClient, done?: () => void) => void) => {
      const checkedOut = connect().then(wrap);
      if (!callback) return checkedOut;
      checkedOut.then(
        (client) => callback(undefined, client, () => client.release()),
        (err: Error) => callback(err),
      );
      return undefined;
    }) as typeof pool.connect;
    try {
      const result = await enrichContent(pool, createEmbedder(h.config), ids);
      expect(result).toMatchObject({ enriched: 1 });
      expect(result.unitsInserted).toBeGreaterThan(0);
    } finally {
      await pool.end();
    }
    expect(answer).toMatch(/^locked after \d+ ms$/);
  });
});
