import type { Db } from "../platform/db.js";

/**
 * Vector ranking of a user's saved pages: the only code that scores page embeddings.
 *
 * Embeddings are stored as `real[]` (the CI Postgres has no pgvector). Scoring them in
 * SQL means unnesting every vector of the user on every recall, which is far too slow
 * at 10,000 pages (docs/benchmarks.md), so each process keeps every recalled user's
 * vectors as one normalised Float32Array matrix and scores it with a dot product.
 *
 * Freshness: each rank call first reads the user's `count(*)` and `sum(vector_rev)` (an
 * index-only scan). A trigger gives a row a new `vector_rev` whenever its embedding,
 * embedding model or project changes and inserts take a fresh one, so any change moves
 * the fingerprint; the cache then re-reads only the rows whose revision differs. Every
 * process notices every writer's changes, and a save is visible to the next recall.
 *
 * Memory: n × dimensions × 4 bytes per cached user (15 MB for 10,000 pages at 384
 * dimensions), least recently used users evicted beyond CONTEXT_VECTOR_CACHE_MB.
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

interface UserMatrix {
  model: string;
  dims: number;
  /** Fingerprint of the rows this matrix was built from. */
  count: number;
  sum: bigint;
  /** Every page of the user (embedded or not) with the vector_rev it was read at. */
  revs: Map<string, bigint>;
  /** Slot → page id and project, for embedded pages only. */
  ids: string[];
  projects: (string | null)[];
  /** ids.length × dims, each row L2-normalised. */
  matrix: Float32Array;
}

interface RowVector {
  id: string;
  rev: bigint;
  project: string | null;
  vector: Float32Array | null;
}

export function normalise(vector: ArrayLike<number>): Float32Array {
  const out = new Float32Array(vector.length);
  let norm = 0;
  for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!;
  norm = Math.sqrt(norm);
  if (norm === 0 || !Number.isFinite(norm)) return out;
  for (let i = 0; i < vector.length; i++) out[i] = vector[i]! / norm;
  return out;
}

/**
 * Decodes PostgreSQL's binary array format (`array_send(real[])`): ndim, has-null flag,
 * element type, then per dimension its length and lower bound, then per element a
 * length word and a big-endian float4. Null elements or several dimensions → null.
 */
export function decodeFloat4Array(bytes: Uint8Array): Float32Array | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 12) return null;
  const ndim = view.getInt32(0);
  if (ndim !== 1 || view.getInt32(4) !== 0 || bytes.byteLength < 20) return null;
  const length = view.getInt32(12);
  if (bytes.byteLength !== 20 + length * 8) return null;
  const out = new Float32Array(length);
  for (let i = 0, at = 20; i < length; i++, at += 8) {
    if (view.getInt32(at) !== 4) return null;
    out[i] = view.getFloat32(at + 4);
  }
  return out;
}

export class CachedMatrixRanker implements PageVectorRanker {
  private readonly cache = new Map<string, UserMatrix>();
  private readonly loading = new Map<string, Promise<UserMatrix>>();
  private cachedBytes = 0;
  /** Counters for tests, benchmarks and metrics: fingerprint hits, refreshes, vectors read. */
  readonly stats = { hits: 0, refreshes: 0, rowsLoaded: 0 };

  constructor(
    private readonly db: Db,
    private readonly maxBytes: number,
  ) {}

  async rank(userId: string, query: readonly number[], options: RankOptions): Promise<VectorMatch[]> {
    if (query.length === 0 || options.limit <= 0) return [];
    const matrix = await this.matrixFor(userId, options.model, query.length);
    return scoreMatrix(matrix, normalise(query), options);
  }

  /** Drops every cached matrix (benchmarks measure the cold path with it). */
  clear(): void {
    this.cache.clear();
    this.cachedBytes = 0;
  }

  private async matrixFor(userId: string, model: string, dims: number): Promise<UserMatrix> {
    const rows = await this.db.$queryRaw<{ n: number; s: string }[]>`
      SELECT count(*)::int AS n, coalesce(sum(vector_rev), 0)::text AS s FROM pages WHERE user_id = ${userId}::uuid`;
    const count = rows[0]?.n ?? 0;
    const sum = BigInt(rows[0]?.s ?? "0");
    const cached = this.cache.get(userId);
    if (cached && cached.model === model && cached.dims === dims && cached.count === count && cached.sum === sum) {
      this.stats.hits++;
      this.touch(userId, cached);
      return cached;
    }
    // One refresh per user at a time; concurrent callers share it.
    let pending = this.loading.get(userId);
    if (!pending) {
      const base = cached && cached.model === model && cached.dims === dims ? cached : undefined;
      pending = this.rebuild(userId, model, dims, base).finally(() => this.loading.delete(userId));
      this.loading.set(userId, pending);
    }
    const built = await pending;
    this.store(userId, built);
    return built;
  }

  private async rebuild(userId: string, model: string, dims: number, base: UserMatrix | undefined): Promise<UserMatrix> {
    this.stats.refreshes++;
    const current = await this.db.$queryRaw<{ id: string; rev: string }[]>`
      SELECT id::text AS id, vector_rev::text AS rev FROM pages WHERE user_id = ${userId}::uuid`;
    const changed: string[] = [];
    for (const row of current) {
      if (base?.revs.get(row.id) !== BigInt(row.rev)) changed.push(row.id);
    }
    const fetched =
      changed.length === 0
        ? []
        : changed.length > current.length / 2
          ? await this.loadVectors(userId, model, dims, null)
          : await this.loadVectors(userId, model, dims, changed);
    const fresh = new Map(fetched.map((r) => [r.id, r]));

    const revs = new Map<string, bigint>();
    const ids: string[] = [];
    const projects: (string | null)[] = [];
    const sources: (Float32Array | number)[] = [];
    const baseSlot = new Map(base?.ids.map((id, slot) => [id, slot]));
    for (const row of current) {
      const got = fresh.get(row.id);
      if (got) {
        revs.set(row.id, got.rev);
        if (got.vector) {
          ids.push(row.id);
          projects.push(got.project);
          sources.push(got.vector);
        }
        continue;
      }
      const rev = base?.revs.get(row.id);
      if (rev === undefined) continue; // deleted between the two reads, or new and missed: next call sees it
      revs.set(row.id, rev);
      const slot = baseSlot.get(row.id);
      if (slot !== undefined && base) {
        ids.push(row.id);
        projects.push(base.projects[slot] ?? null);
        sources.push(slot);
      }
    }
    const matrix = new Float32Array(ids.length * dims);
    sources.forEach((source, slot) => {
      if (typeof source === "number") matrix.set(base!.matrix.subarray(source * dims, (source + 1) * dims), slot * dims);
      else matrix.set(source, slot * dims);
    });
    let sum = 0n;
    for (const rev of revs.values()) sum += rev;
    return { model, dims, count: revs.size, sum, revs, ids, projects, matrix };
  }

  /** Reads page vectors (all of the user's pages, or the listed ones) in PostgreSQL's binary array format. */
  private async loadVectors(userId: string, model: string, dims: number, ids: string[] | null): Promise<RowVector[]> {
    const rows =
      ids === null
        ? await this.db.$queryRaw<{ id: string; rev: string; project_id: string | null; vec: Uint8Array | null }[]>`
            SELECT id::text AS id, vector_rev::text AS rev, project_id::text AS project_id,
                   CASE WHEN embedding_model = ${model} AND cardinality(embedding) = ${dims}
                        THEN array_send(embedding) END AS vec
            FROM pages WHERE user_id = ${userId}::uuid`
        : await this.db.$queryRaw<{ id: string; rev: string; project_id: string | null; vec: Uint8Array | null }[]>`
            SELECT id::text AS id, vector_rev::text AS rev, project_id::text AS project_id,
                   CASE WHEN embedding_model = ${model} AND cardinality(embedding) = ${dims}
                        THEN array_send(embedding) END AS vec
            FROM pages WHERE user_id = ${userId}::uuid AND id = ANY(${ids}::uuid[])`;
    this.stats.rowsLoaded += rows.length;
    return rows.map((r) => {
      const raw = r.vec ? decodeFloat4Array(r.vec) : null;
      return { id: r.id, rev: BigInt(r.rev), project: r.project_id, vector: raw ? normalise(raw) : null };
    });
  }

  private touch(userId: string, matrix: UserMatrix): void {
    this.cache.delete(userId);
    this.cache.set(userId, matrix);
  }

  private store(userId: string, matrix: UserMatrix): void {
    const previous = this.cache.get(userId);
    if (previous === matrix) {
      this.touch(userId, matrix);
      return;
    }
    if (previous) this.cachedBytes -= sizeOf(previous);
    this.cache.delete(userId);
    const bytes = sizeOf(matrix);
    if (bytes > this.maxBytes) return; // larger than the whole budget: use once, keep nothing
    this.cache.set(userId, matrix);
    this.cachedBytes += bytes;
    for (const [other, m] of this.cache) {
      if (this.cachedBytes <= this.maxBytes) break;
      if (other === userId) continue;
      this.cache.delete(other);
      this.cachedBytes -= sizeOf(m);
    }
  }
}

/** Approximate memory of a cached matrix: the floats plus ~150 bytes per page of bookkeeping. */
const sizeOf = (m: UserMatrix) => m.matrix.byteLength + m.revs.size * 150;

/** Top `limit` rows of the matrix by dot product with a unit query, at or above the floor. */
export function scoreMatrix(m: UserMatrix, query: Float32Array, options: RankOptions): VectorMatch[] {
  const { dims, matrix, ids, projects } = m;
  const k = options.limit;
  const topSlot = new Int32Array(k).fill(-1);
  const topScore = new Float64Array(k).fill(Number.NEGATIVE_INFINITY);
  const floor = options.minSimilarity;
  for (let slot = 0; slot < ids.length; slot++) {
    if (options.projectId !== undefined && projects[slot] !== options.projectId) continue;
    let dot = 0;
    const at = slot * dims;
    let i = 0;
    for (; i + 4 <= dims; i += 4) {
      dot +=
        matrix[at + i]! * query[i]! +
        matrix[at + i + 1]! * query[i + 1]! +
        matrix[at + i + 2]! * query[i + 2]! +
        matrix[at + i + 3]! * query[i + 3]!;
    }
    for (; i < dims; i++) dot += matrix[at + i]! * query[i]!;
    if (dot < floor || dot <= topScore[k - 1]!) continue;
    let j = k - 1;
    while (j > 0 && topScore[j - 1]! < dot) {
      topScore[j] = topScore[j - 1]!;
      topSlot[j] = topSlot[j - 1]!;
      j--;
    }
    topScore[j] = dot;
    topSlot[j] = slot;
  }
  const out: VectorMatch[] = [];
  for (let j = 0; j < k && topSlot[j]! >= 0; j++) out.push({ id: ids[topSlot[j]!]!, similarity: topScore[j]! });
  return out;
}
