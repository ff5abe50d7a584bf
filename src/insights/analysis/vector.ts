import { type Db, Prisma } from "../../platform/db.js";
import { cosine } from "../embed/hashing.js";
import type { EmbeddingProvider } from "../embed/provider.js";
import { embeddingText } from "../enrichment/service.js";
import { type AnalysisScope, entitiesInScope, newestInScope } from "./scope.js";

/**
 * Vector scoring over `content_store.embedding` (real[]), kept behind this one module so
 * that a server with pgvector can replace the scan with an index query. The ranking looks at
 * the scope's newest `maxScan` stored rows (read per entity in the order of an index, so the
 * cost does not grow with the scope): rows embedded with the current model are scored from the
 * store; the others of that window (not enriched yet, or embedded by another model) are embedded
 * on the fly, up to `maxOnTheFly` of them. Older rows are left to the full-text ranking.
 */
export interface VectorHit {
  id: string;
  similarity: number;
}

export interface VectorRankResult {
  hits: VectorHit[];
  /** Rows of the window that could not be scored (not enriched, beyond the on-the-fly budget). */
  unscored: number;
}

interface WindowRow {
  id: string;
  /** Null unless embedded with the current model. */
  embedding: number[] | null;
  title: string | null;
  content: string | null;
}

export async function vectorRank(
  db: Db,
  embedder: EmbeddingProvider,
  scope: AnalysisScope,
  queryVector: number[],
  options: { limit: number; maxScan?: number; maxOnTheFly?: number; minSimilarity?: number },
): Promise<VectorRankResult> {
  const maxScan = options.maxScan ?? 5000;
  const maxOnTheFly = options.maxOnTheFly ?? 200;
  const minSimilarity = options.minSimilarity ?? 0.1;

  const entityIds = await entitiesInScope(db, scope);
  if (entityIds.length === 0) return { hits: [], unscored: 0 };
  // The window's ids first (index order, no row's vector read), then the vectors of those rows; the text
  // only of rows that need embedding (a CASE does not evaluate its other branch).
  const current = Prisma.sql`e.embedding_model = ${embedder.model} AND e.embedding IS NOT NULL`;
  const window = await db.$queryRaw<WindowRow[]>`
    SELECT w.id, CASE WHEN ${current} THEN e.embedding END AS embedding,
      CASE WHEN ${current} THEN NULL ELSE c.title END AS title,
      CASE WHEN ${current} THEN NULL ELSE left(c.content, 8000) END AS content
    FROM (${newestInScope(scope, entityIds, null, maxScan)}) w JOIN content_store c ON c.id = w.id
      LEFT JOIN content_enrichment e ON e.content_id = w.id
    ORDER BY w.stored_at DESC, w.id DESC`;
  const stored = window.filter((r) => r.embedding !== null);
  const pending = window.filter((r) => r.embedding === null);
  const onTheFly = pending.slice(0, maxOnTheFly);
  const fresh =
    onTheFly.length > 0 ? await embedder.embed(onTheFly.map((r) => embeddingText({ title: r.title ?? "", content: r.content ?? "" }))) : [];

  const hits: VectorHit[] = [
    ...stored.map((r) => ({ id: r.id, similarity: cosine(queryVector, r.embedding!) })),
    ...onTheFly.map((r, i) => ({ id: r.id, similarity: cosine(queryVector, fresh[i] ?? []) })),
  ].filter((h) => h.similarity >= minSimilarity);
  hits.sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id));
  return { hits: hits.slice(0, options.limit), unscored: pending.length - onTheFly.length };
}
