/**
 * One user's page vectors in memory: a Float32Array of L2-normalised rows with a slot
 * per embedded page, plus the revision (`vector_rev`) of every page of the user, embedded
 * or not, which is what tells a stale matrix from a fresh one.
 *
 * Changes are applied in place, each in one synchronous step, so a scan (also
 * synchronous) never sees half an update.
 */
export interface RowVector {
  id: string;
  rev: bigint;
  project: string | null;
  /** Normalised vector, or null when the page has no comparable embedding. */
  vector: Float32Array | null;
}

export interface ScoreOptions {
  projectId?: string | undefined;
  limit: number;
  minSimilarity: number;
}

export class UserMatrix {
  /** Fingerprint of the rows applied so far: number of pages and sum of their revisions. */
  count = 0;
  sum = 0n;
  /** Highest revision applied: rows above it are new or changed since. */
  maxRev = 0n;
  readonly revs = new Map<string, bigint>();
  private readonly slotOf = new Map<string, number>();
  private ids: (string | null)[] = [];
  private projects: (string | null)[] = [];
  private matrix: Float32Array;
  private readonly free: number[] = [];

  constructor(
    readonly model: string,
    readonly dims: number,
    capacity = 64,
  ) {
    this.matrix = new Float32Array(capacity * dims);
  }

  get bytes(): number {
    return this.matrix.byteLength + this.revs.size * 150;
  }

  /** Inserts or replaces pages. */
  apply(rows: readonly RowVector[]): void {
    for (const row of rows) {
      const previous = this.revs.get(row.id);
      if (previous === undefined) this.count++;
      else this.sum -= previous;
      this.revs.set(row.id, row.rev);
      this.sum += row.rev;
      if (row.rev > this.maxRev) this.maxRev = row.rev;

      let slot = this.slotOf.get(row.id);
      if (!row.vector) {
        if (slot !== undefined) this.release(row.id, slot);
        continue;
      }
      if (slot === undefined) slot = this.allocate(row.id);
      this.projects[slot] = row.project;
      this.matrix.set(row.vector, slot * this.dims);
    }
  }

  /** Forgets pages that no longer exist. */
  remove(ids: Iterable<string>): void {
    for (const id of ids) {
      const rev = this.revs.get(id);
      if (rev === undefined) continue;
      this.revs.delete(id);
      this.count--;
      this.sum -= rev;
      const slot = this.slotOf.get(id);
      if (slot !== undefined) this.release(id, slot);
    }
  }

  private allocate(id: string): number {
    let slot = this.free.pop();
    if (slot === undefined) {
      slot = this.ids.length;
      if ((slot + 1) * this.dims > this.matrix.length) {
        const grown = new Float32Array(Math.max(64, Math.ceil((slot + 1) * 1.5)) * this.dims);
        grown.set(this.matrix);
        this.matrix = grown;
      }
      this.ids.push(null);
      this.projects.push(null);
    }
    this.ids[slot] = id;
    this.slotOf.set(id, slot);
    return slot;
  }

  private release(id: string, slot: number): void {
    this.slotOf.delete(id);
    this.ids[slot] = null;
    this.projects[slot] = null;
    this.free.push(slot);
  }

  /** Top `limit` pages by dot product with a unit query (= cosine), at or above the floor. */
  score(query: Float32Array, options: ScoreOptions): { id: string; similarity: number }[] {
    const { dims, matrix, ids, projects } = this;
    const k = options.limit;
    if (k <= 0 || query.length !== dims) return [];
    const topSlot = new Int32Array(k).fill(-1);
    const topScore = new Float64Array(k).fill(Number.NEGATIVE_INFINITY);
    const floor = options.minSimilarity;
    const project = options.projectId;
    for (let slot = 0; slot < ids.length; slot++) {
      if (ids[slot] === null) continue;
      if (project !== undefined && projects[slot] !== project) continue;
      const at = slot * dims;
      let dot = 0;
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
    const out: { id: string; similarity: number }[] = [];
    for (let j = 0; j < k && topSlot[j]! >= 0; j++) out.push({ id: ids[topSlot[j]!]!, similarity: topScore[j]! });
    return out;
  }
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
