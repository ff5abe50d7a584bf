import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fuseRankings } from "../../src/insights/context/fusion.js";
import { decodeFloat4Array } from "../../src/insights/context/matrix.js";
import { CachedMatrixRanker } from "../../src/insights/context/vectors.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { signIn } from "./helpers.js";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const MODEL = "unit-model";
const unit = (i: number, dims = 4) => Array.from({ length: dims }, (_, j) => (j === i ? 1 : 0));

async function insertPage(userId: string, path: string, embedding: number[] | null, model = MODEL, projectId: string | null = null) {
  const rows = await h.deps.db.$queryRaw<{ id: string }[]>`
    INSERT INTO pages (id, user_id, project_id, path, title, content, embedding, embedding_model)
    VALUES (gen_random_uuid(), ${userId}::uuid, ${projectId}::uuid, ${path}, ${path}, '', ${embedding}::real[], ${model})
    RETURNING id::text AS id`;
  return rows[0]!.id;
}

describe("decodeFloat4Array", () => {
  it("reads PostgreSQL's binary real[] format, and refuses nulls and several dimensions", async () => {
    const rows = await h.deps.db.$queryRaw<{ one: Uint8Array; nul: Uint8Array; two: Uint8Array }[]>`
      SELECT array_send(ARRAY[0.5, -1.25, 3e-7, 0]::real[]) AS one,
             array_send(ARRAY[1, NULL]::real[]) AS nul,
             array_send(ARRAY[[1, 2], [3, 4]]::real[]) AS two`;
    expect(Array.from(decodeFloat4Array(rows[0]!.one)!)).toEqual([0.5, -1.25, Math.fround(3e-7), 0]);
    expect(decodeFloat4Array(rows[0]!.nul)).toBeNull();
    expect(decodeFloat4Array(rows[0]!.two)).toBeNull();
  });
});

describe("CachedMatrixRanker", () => {
  it("ranks by cosine, honours the floor, the limit, the model and the project", async () => {
    const user = await signIn(h);
    const ranker = new CachedMatrixRanker(h.deps.db, 64 * 1024 * 1024);
    const project = "11111111-1111-4111-8111-111111111111";
    const a = await insertPage(user.id, "a", [1, 0, 0, 0]);
    const b = await insertPage(user.id, "b", [0.8, 0.6, 0, 0], MODEL, project);
    await insertPage(user.id, "c", [0, 0, 1, 0]);
    await insertPage(user.id, "other-model", [1, 0, 0, 0], "another-model");
    await insertPage(user.id, "no-vector", null, MODEL);
    const opts = { model: MODEL, limit: 10, minSimilarity: 0.1 };

    const all = await ranker.rank(user.id, [2, 0, 0, 0], opts);
    expect(all.map((m) => m.id)).toEqual([a, b]);
    expect(all[0]!.similarity).toBeCloseTo(1, 6);
    expect(all[1]!.similarity).toBeCloseTo(0.8, 6);
    expect((await ranker.rank(user.id, [1, 0, 0, 0], { ...opts, limit: 1 })).map((m) => m.id)).toEqual([a]);
    expect((await ranker.rank(user.id, [1, 0, 0, 0], { ...opts, projectId: project })).map((m) => m.id)).toEqual([b]);
    expect(await ranker.rank(user.id, [1, 0, 0, 0, 0], opts)).toEqual([]); // other dimensions: nothing comparable
  });

  it("notices every change made by any writer, re-reading only the changed rows", async () => {
    const user = await signIn(h);
    const ranker = new CachedMatrixRanker(h.deps.db, 64 * 1024 * 1024);
    const opts = { model: MODEL, limit: 5, minSimilarity: 0.5 };
    const ids = [];
    for (let i = 0; i < 40; i++) ids.push(await insertPage(user.id, `p${i}`, unit(i % 3)));
    const ranked = async (q: number[]) => (await ranker.rank(user.id, q, opts)).map((m) => m.id);

    expect(await ranked(unit(3))).toEqual([]);
    expect(ranker.stats).toMatchObject({ fullLoads: 1, rowsLoaded: 40 });
    await ranked(unit(3));
    expect(ranker.stats).toMatchObject({ hits: 1, fullLoads: 1 });

    // Another process embeds a page: only that row is read again.
    await h.deps.db.$executeRaw`UPDATE pages SET embedding = ${unit(3)}::real[] WHERE id = ${ids[7]}::uuid`;
    expect(await ranked(unit(3))).toEqual([ids[7]]);
    expect(ranker.stats).toMatchObject({ incremental: 1, rowsLoaded: 41 });

    // A title-only change does not move the fingerprint.
    await h.deps.db.$executeRaw`UPDATE pages SET title = 'renamed' WHERE id = ${ids[7]}::uuid`;
    await ranked(unit(3));
    expect(ranker.stats).toMatchObject({ hits: 2, incremental: 1 });

    // A new page is read alone; a deleted page is noticed by comparing revisions.
    const fresh = await insertPage(user.id, "fresh", unit(3));
    expect(new Set(await ranked(unit(3)))).toEqual(new Set([ids[7], fresh]));
    expect(ranker.stats).toMatchObject({ incremental: 2, rowsLoaded: 42 });
    await h.deps.db.$executeRaw`DELETE FROM pages WHERE id = ${ids[7]}::uuid`;
    expect(await ranked(unit(3))).toEqual([fresh]);
    expect(ranker.stats).toMatchObject({ diffs: 1, rowsLoaded: 42 });

    // A change that landed with a revision below the highest one held (a transaction that
    // took its revision early and committed late) is found by comparing revisions too.
    await h.deps.db.$executeRaw`UPDATE pages SET embedding = ${unit(3)}::real[] WHERE id = ${ids[8]}::uuid`;
    await h.deps.db.$executeRaw`UPDATE pages SET vector_rev = 1 WHERE id = ${ids[8]}::uuid`;
    expect(new Set(await ranked(unit(3)))).toEqual(new Set([fresh, ids[8]]));
    expect(ranker.stats).toMatchObject({ diffs: 2, rowsLoaded: 43 });

    // Re-embedded with another model: no longer comparable.
    await h.deps.db.$executeRaw`UPDATE pages SET embedding_model = 'retired-model' WHERE id = ${fresh}::uuid`;
    expect(await ranked(unit(3))).toEqual([ids[8]]);
    expect(ranker.stats).toMatchObject({ fullLoads: 1, incremental: 3, rowsLoaded: 44 });
  });

  it("shares one refresh between concurrent callers and keeps users apart", async () => {
    const [u1, u2] = [await signIn(h), await signIn(h)];
    const p1 = await insertPage(u1.id, "same", unit(0));
    const p2 = await insertPage(u2.id, "same", unit(0));
    const ranker = new CachedMatrixRanker(h.deps.db, 64 * 1024 * 1024);
    const opts = { model: MODEL, limit: 5, minSimilarity: 0.5 };
    const results = await Promise.all(Array.from({ length: 5 }, () => ranker.rank(u1.id, unit(0), opts)));
    expect(results.every((r) => r.length === 1 && r[0]!.id === p1)).toBe(true);
    expect(ranker.stats.fullLoads).toBe(1);
    expect((await ranker.rank(u2.id, unit(0), opts)).map((m) => m.id)).toEqual([p2]);
  });

  it("evicts least recently used users beyond its memory budget and still answers correctly", async () => {
    const users = [await signIn(h), await signIn(h), await signIn(h)];
    const pages = [];
    for (const u of users) pages.push(await insertPage(u.id, "x", unit(1)));
    // Room for about one user's matrix (4 floats + bookkeeping per page).
    const ranker = new CachedMatrixRanker(h.deps.db, 200);
    const opts = { model: MODEL, limit: 5, minSimilarity: 0.5 };
    for (const [i, u] of users.entries()) expect((await ranker.rank(u.id, unit(1), opts)).map((m) => m.id)).toEqual([pages[i]]);
    await ranker.rank(users[2]!.id, unit(1), opts);
    expect(ranker.stats).toMatchObject({ fullLoads: 3, hits: 1 });
    await ranker.rank(users[0]!.id, unit(1), opts); // evicted: read again
    expect(ranker.stats.fullLoads).toBe(4);
  });
});

describe("fuseRankings", () => {
  it("scores by reciprocal rank, keeping items found by one ranking only", () => {
    const fused = fuseRankings([
      ["k1", "both"],
      ["both", "v1"],
    ]);
    expect(fused.map((f) => f.id)).toEqual(["both", "k1", "v1"]);
    expect(fused[0]!.score).toBeCloseTo(1 / 62 + 1 / 61, 12);
    expect(fused[0]!.ranks).toEqual([2, 1]);
    expect(fused[1]).toEqual({ id: "k1", score: 1 / 61, ranks: [1, null] });
    expect(fused[2]).toEqual({ id: "v1", score: 1 / 62, ranks: [null, 2] });
    expect(fuseRankings([[], []])).toEqual([]);
  });
});
