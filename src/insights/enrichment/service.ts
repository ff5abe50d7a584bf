import { randomUUID } from "node:crypto";
import type { Db } from "../../platform/db.js";
import type { EmbeddingProvider } from "../embed/provider.js";
import { feedbackKind } from "./feedback-kind/index.js";
import { ANALYSER_VERSION, opinionUnits } from "./opinions.js";

/**
 * Enrichment of stored originals, run after ingest commits: each row gets an embedding
 * (content_store.embedding, embedding_model, enriched_at), its opinion units and the kind of
 * feedback it is (content_store.feedback_kind). It is
 * idempotent: a row already embedded with the current model is left alone, and units are
 * inserted with ON CONFLICT (content_id, start_offset) DO NOTHING, so running the same
 * ids again changes nothing.
 */
export interface EnrichmentResult {
  requested: number;
  enriched: number;
  alreadyEnriched: number;
  missing: number;
  unitsInserted: number;
}

/** Rows are read, embedded and written in chunks of this many. */
export const ENRICH_CHUNK = 50;
/** Characters of a row (title + content) that go into its embedding. */
export const EMBED_TEXT_CHARS = 8000;

export function embeddingText(row: { title: string; content: string }): string {
  const text = row.title ? `${row.title}\n${row.content}` : row.content;
  return text.slice(0, EMBED_TEXT_CHARS);
}

export async function enrichContent(db: Db, embedder: EmbeddingProvider, contentIds: string[]): Promise<EnrichmentResult> {
  const ids = [...new Set(contentIds)];
  const result: EnrichmentResult = { requested: ids.length, enriched: 0, alreadyEnriched: 0, missing: 0, unitsInserted: 0 };
  for (let i = 0; i < ids.length; i += ENRICH_CHUNK) {
    const chunk = ids.slice(i, i + ENRICH_CHUNK);
    const rows = await db.content.findMany({
      where: { id: { in: chunk } },
      select: { id: true, entityId: true, title: true, content: true, embeddingModel: true, enrichedAt: true },
    });
    result.missing += chunk.length - rows.length;
    const todo = rows.filter((r) => r.enrichedAt === null || r.embeddingModel !== embedder.model);
    result.alreadyEnriched += rows.length - todo.length;
    if (todo.length === 0) continue;

    // Work that can fail (a remote embedder) happens before anything is written.
    const vectors = await embedder.embed(todo.map(embeddingText));
    const spans = todo.map((row) => opinionUnits(row.content));
    const kinds = todo.map((row, index) => feedbackKind(row.title, row.content, spans[index]!));
    const units = todo.flatMap((row, index) =>
      spans[index]!.map((u) => ({
        id: randomUUID(),
        contentId: row.id,
        entityId: row.entityId,
        startOffset: u.start,
        endOffset: u.end,
        text: u.text,
        aspect: u.aspect,
        sentiment: u.sentiment,
        sentimentLabel: u.label,
        kind: u.kind,
        terms: u.terms,
        comparedWith: u.comparedWith,
        churn: u.churn,
        analyserVersion: ANALYSER_VERSION,
      })),
    );

    await db.$transaction(async (tx) => {
      // The rows are locked as the update would lock them, and only those still stored get units: a
      // row deleted meanwhile (src/governance/deletion) must not leave units of its words behind.
      const locked = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM content_store WHERE id = ANY(${todo.map((r) => r.id)}::uuid[]) ORDER BY id FOR NO KEY UPDATE`;
      const present = new Set(locked.map((r) => r.id));
      const kept = units.filter((u) => present.has(u.contentId));
      if (kept.length > 0) {
        const inserted = await tx.opinionUnit.createMany({ data: kept, skipDuplicates: true });
        result.unitsInserted += inserted.count;
      }
      const enrichedAt = new Date();
      for (const [index, row] of todo.entries()) {
        if (!present.has(row.id)) {
          result.missing++;
          continue;
        }
        // Conditional, so a concurrent run of the same ids (a re-delivered job) writes nothing twice.
        const updated = await tx.content.updateMany({
          where: { id: row.id, OR: [{ enrichedAt: null }, { embeddingModel: null }, { embeddingModel: { not: embedder.model } }] },
          data: { embedding: vectors[index] ?? [], embeddingModel: embedder.model, enrichedAt, feedbackKind: kinds[index] ?? null },
        });
        if (updated.count === 1) result.enriched++;
        else result.alreadyEnriched++;
      }
    });
  }
  return result;
}
