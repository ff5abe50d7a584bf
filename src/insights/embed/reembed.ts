import type { AppDeps } from "../../platform/deps.js";
import { pageEmbeddingText } from "../context/embedding.js";
import { storeEmbedding } from "../context/repo.js";
import { embeddingText } from "../enrichment/service.js";
import { createBulkEmbedder, createEmbedder, type EmbeddingProvider } from "./provider.js";

/**
 * Re-embedding of stored vectors made by another model than the current one (after the default moved from
 * feature hashing, `local-hashing-v1`, to the trained models, or after EMBEDDINGS_URL/EMBEDDINGS_MODEL
 * changed): saved pages get the page embedder's vectors (the encoder), stored originals
 * (content_enrichment) the bulk embedder's (the static companion). Only the vector and its model change;
 * opinion units and feedback kinds stay.
 *
 * Run as the `embeddings.reembed.v1` job (`npm run admin -- reembed`), in chunks, each written in one
 * statement that only replaces a vector still of another model (and, for a page, of the version that was
 * read), so a save or an enrichment meanwhile is never overwritten. Nothing is kept but the rows
 * themselves: a row is done once its model is the current one, so a stopped or crashed run, started
 * again, picks up exactly the rows left. Meanwhile recall and analysis compare only vectors of the
 * current model (context/vectors.ts, analysis/vector.ts): rows not re-embedded yet are found by
 * full-text match until their turn.
 */

export interface ReembedTargets {
  pages: EmbeddingProvider;
  originals: EmbeddingProvider;
}

export const reembedTargets = (config: AppDeps["config"]): ReembedTargets => ({
  pages: createEmbedder(config),
  originals: createBulkEmbedder(config),
});

export interface ReembedProgress {
  pages: { model: string; done: number; left: number };
  originals: { model: string; done: number; left: number };
}

export interface ReembedResult {
  status: "completed" | "stopped";
  /** Rows this run re-embedded. */
  pages: number;
  originals: number;
}

export const PAGE_CHUNK = 64;
export const ORIGINAL_CHUNK = 500;

/** How many rows are of the current model and how many are left, per store. */
export async function reembedProgress(deps: Pick<AppDeps, "db">, targets: ReembedTargets): Promise<ReembedProgress> {
  const [pages] = await deps.db.$queryRaw<{ done: number; left: number }[]>`
    SELECT count(*) FILTER (WHERE embedding_model = ${targets.pages.model})::int AS done,
      count(*) FILTER (WHERE embedding_model IS DISTINCT FROM ${targets.pages.model})::int AS left
    FROM pages`;
  const [originals] = await deps.db.$queryRaw<{ done: number; left: number }[]>`
    SELECT count(*) FILTER (WHERE embedding_model = ${targets.originals.model})::int AS done,
      count(*) FILTER (WHERE embedding_model IS NOT NULL AND embedding_model <> ${targets.originals.model})::int AS left
    FROM content_enrichment`;
  return {
    pages: { model: targets.pages.model, done: pages?.done ?? 0, left: pages?.left ?? 0 },
    originals: { model: targets.originals.model, done: originals?.done ?? 0, left: originals?.left ?? 0 },
  };
}

/** Which models the rows left carry (for the status line): model (or "none") → rows. */
export async function modelsLeft(deps: Pick<AppDeps, "db">, targets: ReembedTargets) {
  const pages = await deps.db.$queryRaw<{ model: string | null; n: number }[]>`
    SELECT embedding_model AS model, count(*)::int AS n FROM pages
    WHERE embedding_model IS DISTINCT FROM ${targets.pages.model} GROUP BY 1 ORDER BY 2 DESC`;
  const originals = await deps.db.$queryRaw<{ model: string | null; n: number }[]>`
    SELECT embedding_model AS model, count(*)::int AS n FROM content_enrichment
    WHERE embedding_model IS NOT NULL AND embedding_model <> ${targets.originals.model} GROUP BY 1 ORDER BY 2 DESC`;
  return { pages, originals };
}

/**
 * Re-embeds every stored vector of another model, pages first. `shouldStop` is asked between chunks (an
 * operator's stop, a worker shutting down); `onChunk` hears after each chunk what this run has done.
 */
export async function reembedStored(
  deps: Pick<AppDeps, "db" | "pool">,
  targets: ReembedTargets,
  hooks: {
    shouldStop?: () => Promise<boolean> | boolean;
    onChunk?: (done: { pages: number; originals: number }) => Promise<void> | void;
  } = {},
  chunks: { pages?: number; originals?: number } = {},
): Promise<ReembedResult> {
  const done = { pages: 0, originals: 0 };
  const stop = async () => (hooks.shouldStop ? await hooks.shouldStop() : false);

  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    if (await stop()) return { status: "stopped", ...done };
    const rows = await deps.db.$queryRaw<{ id: string; title: string; content: string; version: number }[]>`
      SELECT id, title, content, version FROM pages
      WHERE embedding_model IS DISTINCT FROM ${targets.pages.model} AND id > ${after}::uuid
      ORDER BY id LIMIT ${chunks.pages ?? PAGE_CHUNK}`;
    if (rows.length === 0) break;
    const vectors = await targets.pages.embed(rows.map((r) => pageEmbeddingText(r.title, r.content)));
    for (const [i, row] of rows.entries()) {
      const vector = vectors[i];
      // A page saved meanwhile has a new version, and its save embedded it already.
      if (vector && (await storeEmbedding(deps.db, row.id, row.version, vector, targets.pages.model))) done.pages++;
    }
    after = rows.at(-1)!.id;
    await hooks.onChunk?.(done);
  }

  after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    if (await stop()) return { status: "stopped", ...done };
    const { rows } = await deps.pool.query<{ id: string; title: string; content: string }>(
      `SELECT e.content_id AS id, c.title, left(c.content, 8000) AS content
       FROM content_enrichment e JOIN content_store c ON c.id = e.content_id
       WHERE e.embedding_model IS NOT NULL AND e.embedding_model <> $1 AND e.content_id > $2::uuid
       ORDER BY e.content_id LIMIT $3`,
      [targets.originals.model, after, chunks.originals ?? ORIGINAL_CHUNK],
    );
    if (rows.length === 0) break;
    const vectors = await targets.originals.embed(rows.map((r) => embeddingText({ title: r.title ?? "", content: r.content ?? "" })));
    const dims = vectors[0]?.length ?? 0;
    if (dims === 0 || vectors.some((v) => v.length !== dims)) throw new Error("the embedder answered vectors of differing lengths");
    // One statement for the chunk; a row enriched again meanwhile (now of the current model) is left alone.
    const updated = await deps.pool.query(
      `UPDATE content_enrichment e SET embedding = ($1::real[])[(u.ord - 1) * $2::int + 1 : u.ord * $2::int], embedding_model = $3
       FROM unnest($4::uuid[]) WITH ORDINALITY AS u(id, ord)
       WHERE e.content_id = u.id AND e.embedding_model IS NOT NULL AND e.embedding_model <> $3`,
      [vectors.flat(), dims, targets.originals.model, rows.map((r) => r.id)],
    );
    done.originals += updated.rowCount ?? 0;
    after = rows.at(-1)!.id;
    await hooks.onChunk?.(done);
  }
  return { status: "completed", ...done };
}
