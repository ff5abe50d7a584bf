import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { bearer, createEntityFor, createKeyFor, source } from "../helpers/evidence.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";

/** Paging through a table while rows are being added neither skips nor repeats a row. */
let h: Harness;
let token: string;
let key: string;
beforeAll(async () => {
  h = await createHarness();
  const sub = randomId("pager-");
  token = await h.token(sub);
  key = (await createKeyFor(h, token, ["export"])).raw_key;
  await runAdminCommand(h.deps, ["enable-raw-export", sub]);
});
afterAll(() => h.close());

let serial = 0;
async function addSources(entityId: string, n: number): Promise<string[]> {
  const sources = Array.from({ length: n }, (_, i) => source(serial + i + 1));
  serial += n;
  const res = await h.http.post("/agent/v1/ingest/content").set(bearer(token)).send({ entity_id: entityId, sources });
  expect(res.status).toBe(200);
  return res.body.content_ids;
}

type Page = { rows: { id: string }[]; next_offset: number | null; next_cursor: string | null; total: number; offset: number };
const page = async (query: string): Promise<Page> => {
  const res = await h.http.get(`/agent/v1/export/table/content_store?${query}`).set(bearer(key));
  expect(res.status).toBe(200);
  return res.body;
};

function expectExactlyOnce(seen: string[], expected: string[]) {
  expect(new Set(seen).size).toBe(seen.length);
  const set = new Set(seen);
  for (const id of expected) expect(set.has(id)).toBe(true);
}

describe("export paging while rows are added", () => {
  it("offset paging: rows added between pages land at the end, nothing skipped or repeated", async () => {
    const entity = await createEntityFor(h, token);
    const existing: string[] = [];
    for (let i = 0; i < 5; i++) existing.push(...(await addSources(entity.id, 10)));

    const seen: string[] = [];
    const added: string[] = [];
    let offset: number | null = 0;
    let pages = 0;
    while (offset !== null) {
      const p = await page(`entity_id=${entity.id}&limit=7&offset=${offset}`);
      seen.push(...p.rows.map((r) => r.id));
      offset = p.next_offset;
      pages += 1;
      if (pages <= 6) added.push(...(await addSources(entity.id, 3)));
    }
    expectExactlyOnce(seen, existing);
    // Every row added while paging was also reached, after the rows that were there first.
    expectExactlyOnce(seen, added);
    expect(seen.slice(0, existing.length).sort()).toEqual([...existing].sort());
  });

  it("cursor paging: exact even when added rows sort before the current page", async () => {
    const entity = await createEntityFor(h, token);
    const existing: string[] = [];
    for (let i = 0; i < 4; i++) existing.push(...(await addSources(entity.id, 10)));

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    let lastOffset = -1;
    do {
      const p: Page = await page(`entity_id=${entity.id}&limit=6${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...p.rows.map((r) => r.id));
      // The position of the page within the table at the time it was read.
      expect(p.offset).toBeGreaterThan(lastOffset);
      lastOffset = p.offset;
      cursor = p.next_cursor;
      pages += 1;
      if (pages <= 5) {
        // Rows at the end, and rows whose transaction started long ago (an earlier created_at).
        await addSources(entity.id, 2);
        const [old] = await addSources(entity.id, 1);
        await h.deps.db.$executeRaw`UPDATE content_store SET created_at = '2000-01-01T00:00:00Z' WHERE id = ${old}::uuid`;
      }
    } while (cursor);
    expectExactlyOnce(seen, existing);
  });

  it("offset paging would repeat a row when one lands before the page; the cursor does not", async () => {
    const entity = await createEntityFor(h, token);
    const existing = await addSources(entity.id, 10);
    const first = await page(`entity_id=${entity.id}&limit=5`);
    const [old] = await addSources(entity.id, 1);
    await h.deps.db.$executeRaw`UPDATE content_store SET created_at = '2000-01-01T00:00:00Z' WHERE id = ${old}::uuid`;
    const byOffset = await page(`entity_id=${entity.id}&limit=5&offset=5`);
    const byCursor = await page(`entity_id=${entity.id}&limit=5&cursor=${first.next_cursor}`);
    // The cursor continues exactly after the first page.
    expect([...first.rows, ...byCursor.rows].map((r) => r.id).sort()).toEqual([...existing].sort());
    expect(byCursor.offset).toBe(6);
    // Offset paging shifted by the early row: it repeats the last row of the first page.
    expect(byOffset.rows[0]?.id).toBe(first.rows[4]?.id);
  });
});
