import type { Db, Prisma } from "../../platform/db.js";
import { cosine } from "../embed/hashing.js";
import type { EmbeddingProvider } from "../embed/provider.js";
import { embeddingText } from "../enrichment/service.js";

/**
 * Vector scoring over `content_store.embedding` (real[]), kept behind this one module so
 * that a server with pgvector can replace the scan with an index query. Rows embedded
 * with the current model are scored from the store (the most recent `maxScan` in scope);
 * rows not yet enriched are embedded on the fly, up to `maxOnTheFly` of them.
 */
export interface VectorHit {
  id: string;
  similarity: number;
}

export interface VectorRankResult {
  hits: VectorHit[];
  /** Rows in scope that could not be scored (not enriched, beyond the on-the-fly budget). */
  unscored: number;
}

export async function vectorRank(
  db: Db,
  embedder: EmbeddingProvider,
  condition: Prisma.Sql,
  queryVector: number[],
  options: { limit: number; maxScan?: number; maxOnTheFly?: number; minSimilarity?: number },
): Promise<VectorRankResult> {
  const maxScan = options.maxScan ?? 5000;
  const maxOnTheFly = options.maxOnTheFly ?? 200;
  const minSimilarity = options.minSimilarity ?? 0.1;

  const stored = await db.$queryRaw<{ id: string; embedding: number[] }[]>`
    SELECT c.id, c.embedding FROM content_store c
    WHERE ${condition} AND c.embedding_model = ${embedder.model} AND c.embedding IS NOT NULL
    ORDER BY c.created_at DESC, c.id LIMIT ${maxScan}`;
  const pending = await db.$queryRaw<{ id: string; title: string; content: string }[]>`
    SELECT c.id, c.title, left(c.content, 8000) AS content FROM content_store c
    WHERE ${condition} AND (c.embedding_model IS DISTINCT FROM ${embedder.model} OR c.embedding IS NULL)
    ORDER BY c.created_at DESC, c.id LIMIT ${maxOnTheFly + 1}`;
  const onTheFly = pending.slice(0, maxOnTheFly);
  let unscored = pending.length > maxOnTheFly ? 1 : 0;
  if (unscored > 0) {
    const [row] = await db.$queryRaw<{ n: bigint }[]>`
      SELECT count(*) AS n FROM content_store c
      WHERE ${condition} AND (c.embedding_model IS DISTINCT FROM ${embedder.model} OR c.embedding IS NULL)`;
    unscored = Number(row?.n ?? 0) - maxOnTheFly;
  }
  const fresh = onTheFly.length > 0 ? await embedder.embed(onTheFly.map(embeddingText)) : [];

  const hits: VectorHit[] = [
    ...stored.map((r) => ({ id: r.id, similarity: cosine(queryVector, r.embedding) })),
    ...onTheFly.map((r, i) => ({ id: r.id, similarity: cosine(queryVector, fresh[i] ?? []) })),
  ].filter((h) => h.similarity >= minSimilarity);
  hits.sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id));
  return { hits: hits.slice(0, options.limit), unscored };
}
