import type { Db } from "../../platform/db.js";
import { decodeFloat4Array, normalise, type RowVector, UserMatrix } from "./matrix.js";

/**
 * Vector ranking of a user's saved pages: the only code that scores page embeddings.
 *
 * Embeddings are stored as `real[]` (the CI Postgres has no pgvector). Scoring them in
 * SQL means unnesting every vector of the user on every recall, which takes the better
 * part of a second at 10,000 pages (docs/benchmarks.md), so each process keeps every
 * recalled user's vectors as one normalised Float32Array matrix and scans it.
 *
 * Freshness: each rank call first reads the user's `count(*)` and `sum(vector_rev)` (an
 * index-only scan). Inserts take a fresh `vector_rev` and a trigger gives a row a new
 * one whenever its embedding, embedding model or project changes, so any such change
 * by any writer moves the fingerprint. The cache then reads the rows above the highest
 * revision it holds; if those explain the new fingerprint it is done, otherwise (a
 * delete, or a commit that landed out of revision order) it compares every page's
 * revision and reads what differs. A save is therefore visible to the next recall, in
 * every process.
 *
 * Memory: n × dimensions × 4 bytes per cached user (15 MB for 10,000 pages at 384
 * dimensions); least recently used users are evicted beyond CONTEXT_VECTOR_CACHE_MB.
 *
 * A server with pgvector can replace this class with one whose `rank` runs
 * `ORDER BY embedding <=> $query LIMIT $limit` over a vector column and index.
 */
export interface VectorMatch {
  id: string;
  similarity: number;
}

export interface RankOptions {
  /** Only pages embedded with this model (and the query's dimensions) are comparable. */
  model: string;
  projectId?: string | undefined;
  limit: number;
  /** Cosine similarity below which a page is not a match at all. */
  minSimilarity: number;
}

export interface PageVectorRanker {
  rank(userId: string, query: readonly number[], options: RankOptions): Promise<VectorMatch[]>;
}

type VectorRow = { id: string; rev: string; project_id: string | null; vec: Uint8Array | null };

export class CachedMatrixRanker implements PageVectorRanker {
  private readonly cache = new Map<string, UserMatrix>();
  private readonly loading = new Map<string, Promise<UserMatrix>>();
  /** Counters for tests and benchmarks: fingerprint hits, full loads, incremental and diff refreshes, vectors read. */
  readonly stats = { hits: 0, fullLoads: 0, incremental: 0, diffs: 0, rowsLoaded: 0 };

  constructor(
    private readonly db: Db,
    private readonly maxBytes: number,
  ) {}

  async rank(userId: string, query: readonly number[], options: RankOptions): Promise<VectorMatch[]> {
    if (query.length === 0 || options.limit <= 0) return [];
    const matrix = await this.matrixFor(userId, options.model, query.length);
    return matrix.score(normalise(query), options);
  }

  /** Drops every cached matrix (benchmarks measure the cold path with it). */
  clear(): void {
    this.cache.clear();
  }

  private async matrixFor(userId: string, model: string, dims: number): Promise<UserMatrix> {
    for (;;) {
      // One refresh per user at a time: wait for a running one, then look again.
      const pending = this.loading.get(userId);
      if (pending) {
        await pending.catch(() => undefined);
        continue;
      }
      const fingerprint = await this.fingerprint(userId);
      if (this.loading.has(userId)) continue; // another caller started a refresh meanwhile
      let matrix = this.cache.get(userId);
      if (matrix && (matrix.model !== model || matrix.dims !== dims)) matrix = undefined;
      if (matrix && matrix.count === fingerprint.count && matrix.sum === fingerprint.sum) {
        this.stats.hits++;
      } else {
        const refresh = this.refresh(userId, model, dims, matrix, fingerprint);
        this.loading.set(userId, refresh);
        try {
          matrix = await refresh;
        } finally {
          this.loading.delete(userId);
        }
      }
      this.keep(userId, matrix);
      return matrix;
    }
  }

  private async fingerprint(userId: string): Promise<{ count: number; sum: bigint }> {
    const rows = await this.db.$queryRaw<{ n: number; s: string }[]>`
      SELECT count(*)::int AS n, coalesce(sum(vector_rev), 0)::text AS s FROM pages WHERE user_id = ${userId}::uuid`;
    return { count: rows[0]?.n ?? 0, sum: BigInt(rows[0]?.s ?? "0") };
  }

  private async refresh(
    userId: string,
    model: string,
    dims: number,
    cached: UserMatrix | undefined,
    target: { count: number; sum: bigint },
  ): Promise<UserMatrix> {
    if (!cached) {
      this.stats.fullLoads++;
      const matrix = new UserMatrix(model, dims, target.count);
      matrix.apply(await this.load(userId, model, dims, { all: true }));
      return matrix;
    }
    // Usually only rows above the highest revision held changed (saves, embedding jobs).
    cached.apply(await this.load(userId, model, dims, { above: cached.maxRev }));
    if (cached.count === target.count && cached.sum === target.sum) {
      this.stats.incremental++;
      return cached;
    }
    // Otherwise: compare every page's revision, forget deleted pages, read the rest that differ.
    this.stats.diffs++;
    const current = await this.db.$queryRaw<{ id: string; rev: string }[]>`
      SELECT id::text AS id, vector_rev::text AS rev FROM pages WHERE user_id = ${userId}::uuid`;
    const present = new Set<string>();
    const changed: string[] = [];
    for (const row of current) {
      present.add(row.id);
      if (cached.revs.get(row.id) !== BigInt(row.rev)) changed.push(row.id);
    }
    cached.remove([...cached.revs.keys()].filter((id) => !present.has(id)));
    if (changed.length > 0) cached.apply(await this.load(userId, model, dims, { ids: changed }));
    return cached;
  }

  /** Reads page vectors in PostgreSQL's binary array format (no text parsing of 384 floats a row). */
  private async load(
    userId: string,
    model: string,
    dims: number,
    which: { all: true } | { above: bigint } | { ids: string[] },
  ): Promise<RowVector[]> {
    let rows: VectorRow[];
    if ("all" in which)
      rows = await this.db.$queryRaw<VectorRow[]>`
        SELECT id::text AS id, vector_rev::text AS rev, project_id::text AS project_id,
               CASE WHEN embedding_model = ${model} AND cardinality(embedding) = ${dims} THEN array_send(embedding) END AS vec
        FROM pages WHERE user_id = ${userId}::uuid`;
    else if ("above" in which)
      rows = await this.db.$queryRaw<VectorRow[]>`
        SELECT id::text AS id, vector_rev::text AS rev, project_id::text AS project_id,
               CASE WHEN embedding_model = ${model} AND cardinality(embedding) = ${dims} THEN array_send(embedding) END AS vec
        FROM pages WHERE user_id = ${userId}::uuid AND vector_rev > ${which.above.toString()}::bigint`;
    else
      rows = await this.db.$queryRaw<VectorRow[]>`
        SELECT id::text AS id, vector_rev::text AS rev, project_id::text AS project_id,
               CASE WHEN embedding_model = ${model} AND cardinality(embedding) = ${dims} THEN array_send(embedding) END AS vec
        FROM pages WHERE user_id = ${userId}::uuid AND id = ANY(${which.ids}::uuid[])`;
    this.stats.rowsLoaded += rows.length;
    return rows.map((r) => {
      const raw = r.vec ? decodeFloat4Array(r.vec) : null;
      return { id: r.id, rev: BigInt(r.rev), project: r.project_id, vector: raw ? normalise(raw) : null };
    });
  }

  /** Marks the user's matrix most recently used and evicts the least recently used beyond the budget. */
  private keep(userId: string, matrix: UserMatrix): void {
    this.cache.delete(userId);
    if (matrix.bytes > this.maxBytes) return; // larger than the whole budget: used once, not kept
    this.cache.set(userId, matrix);
    let total = 0;
    for (const m of this.cache.values()) total += m.bytes;
    for (const [other, m] of this.cache) {
      if (total <= this.maxBytes || other === userId) break;
      this.cache.delete(other);
      total -= m.bytes;
    }
  }
}
