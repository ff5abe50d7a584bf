import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { OpinionUnit } from "../../generated/prisma/client.js";
import { poolTransaction } from "../../platform/db.js";
import type { EmbeddingProvider } from "../embed/provider.js";
import { type Analyser, analyseInline, type RowAnalysis, type RowText } from "./analyse.js";
import { labelNames } from "./feedback-kind/labels.js";
import { ANALYSER_VERSION } from "./opinions.js";

/**
 * Enrichment of stored originals, run after ingest commits: each row gets an embedding
 * (content_enrichment.embedding, embedding_model, enriched_at), its opinion units and the kind of
 * feedback it is (content_enrichment.feedback_kind); the original itself is not rewritten. It is
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

/**
 * Rows are read, embedded and written in chunks of this many, unless the caller says otherwise (the worker:
 * `ENRICH_CHUNK_ROWS`). Larger chunks cost PostgreSQL much less per row (the units' rollup trigger runs once a
 * statement, and one entity's writers wait for each other until commit) and the worker more memory: behind a
 * 100,000-row import, 50 rows gave 660 rows/s, 200 rows 1,114 and 500 rows 1,334 (docs/benchmarks.md).
 */
export const ENRICH_CHUNK = 200;
/** Characters of a row (title + content) that go into its embedding. */
export const EMBED_TEXT_CHARS = 8000;

export function embeddingText(row: { title: string; content: string }): string {
  const text = row.title ? `${row.title}\n${row.content}` : row.content;
  return text.slice(0, EMBED_TEXT_CHARS);
}

/** A unit as the chunk writes it: every column but its date (`seen_at`, its original's: lockForUnits) and created_at. */
export type Unit = Omit<OpinionUnit, "seenAt" | "createdAt">;

/**
 * Locks the chunk's originals that are still stored (`enrichedOnly`: and enriched) in id order, as every writer
 * of their units does, and answers each one's date for its units (`content_seen_at`: published, else stored;
 * null for summaries and meeting notes) as PostgreSQL's text. The lock holds it still until the units are
 * written, so writing it with them spares the units' trigger a look-up per unit (migration 20261203090000).
 */
export async function lockForUnits(client: pg.PoolClient, ids: string[], enrichedOnly = false): Promise<Map<string, string | null>> {
  const enriched = enrichedOnly
    ? " AND EXISTS (SELECT 1 FROM content_enrichment e WHERE e.content_id = c.id AND e.enriched_at IS NOT NULL)"
    : "";
  const { rows } = await client.query<{ id: string; seenAt: string | null }>(
    `SELECT c.id, content_seen_at(c.kind, c.metadata, c.published_at, c.created_at)::text AS "seenAt" FROM content_store c
     WHERE c.id = ANY($1::uuid[])${enriched} ORDER BY c.id FOR NO KEY UPDATE OF c`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r.seenAt]));
}

/** The units of analysed rows as the chunk writes them, each with a new id and the current analyser's version. */
export function unitsToWrite(rows: readonly { id: string; entityId: string }[], analysed: readonly RowAnalysis[]): Unit[] {
  return rows.flatMap((row, index) =>
    analysed[index]!.spans.map((u) => ({
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
}

/** A feedback-kind confidence as stored: four decimals. */
export const storedConfidence = (confidence: number) => Math.round(confidence * 1e4) / 1e4;

/** JSON has no NaN or Infinity: they travel as the text PostgreSQL reads as a real ("NaN", "Infinity"). */
const finiteOrText = (_key: string, value: unknown) => (typeof value === "number" && !Number.isFinite(value) ? String(value) : value);

/**
 * The chunk's units in one statement (a row per unit from one JSON array), skipping a unit whose
 * (original, start offset) is already stored, as a re-run of the same ids finds them. Each unit is dated
 * by its original's date from `seenAt` (lockForUnits); a unit whose original is not there gets the trigger's
 * look-up. Answers how many were inserted.
 */
export async function insertUnits(client: pg.PoolClient, units: Unit[], seenAt: ReadonlyMap<string, string | null>): Promise<number> {
  const dated = units.map((u) => ({ ...u, seenAt: seenAt.get(u.contentId) ?? null }));
  const { rows } = await client.query<{ n: number }>(
    `WITH inserted AS (
      INSERT INTO opinion_units (id, content_id, entity_id, start_offset, end_offset, text, aspect, sentiment, sentiment_label,
        kind, terms, compared_with, churn, analyser_version, seen_at)
      SELECT u."id", u."contentId", u."entityId", u."startOffset", u."endOffset", u."text", u."aspect", u."sentiment"::real,
        u."sentimentLabel", u."kind", ARRAY(SELECT jsonb_array_elements_text(u."terms")), u."comparedWith", u."churn", u."analyserVersion",
        u."seenAt"
      FROM jsonb_to_recordset($1::jsonb) AS u("id" uuid, "contentId" uuid, "entityId" uuid, "startOffset" int,
        "endOffset" int, "text" text, "aspect" text, "sentiment" text, "sentimentLabel" text, "kind" text, "terms" jsonb,
        "comparedWith" text, "churn" boolean, "analyserVersion" smallint, "seenAt" timestamptz)
      ON CONFLICT DO NOTHING
      RETURNING 1
    )
    SELECT count(*)::int AS n FROM inserted`,
    // The replacer runs for every key of every unit, so only when a sentiment needs it.
    [JSON.stringify(dated, units.every((u) => Number.isFinite(u.sentiment)) ? undefined : finiteOrText)],
  );
  return rows[0]?.n ?? 0;
}

/** PostgreSQL's type id of `real` (float4): the element type a binary `real[]` names. */
const FLOAT4_OID = 700;

/**
 * Vectors as one `real[]` in PostgreSQL's binary array format, row after row: the driver sends a Buffer
 * parameter as binary, so no number is printed here or parsed by the server (the text literal cost the
 * worker about 60 µs a row and the server the parse of every number). A value that is not finite is
 * stored as NaN, as the text literal stored it.
 */
function flatVectorBinary(vectors: readonly (readonly number[])[], dims: number): Buffer {
  const count = vectors.length * dims;
  const out = Buffer.allocUnsafe(20 + count * 8);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setInt32(0, 1); // dimensions
  view.setInt32(4, 0); // no NULL elements
  view.setInt32(8, FLOAT4_OID);
  view.setInt32(12, count); // elements
  view.setInt32(16, 1); // lower bound
  let at = 20;
  for (const vector of vectors) {
    for (let i = 0; i < dims; i++) {
      const x = vector[i]!;
      view.setInt32(at, 4);
      view.setFloat32(at + 4, Number.isFinite(x) ? x : Number.NaN);
      at += 8;
    }
  }
  return out;
}

interface StoredRow {
  id: string;
  entityId: string;
  title: string;
  content: string;
  embeddingModel: string | null;
  enrichedAt: Date | null;
  /** `metadata.labels`: an issue tracker's labels, when the row was stored with them. */
  labels: unknown;
}

/** What the analysis reads of a stored row: its title, its text and the tracker labels it carries. */
export function analysisInput(row: { title: string; content: string; labels: unknown }): RowText {
  const labels = labelNames(row.labels);
  return labels.length > 0 ? { title: row.title, content: row.content, labels } : { title: row.title, content: row.content };
}

/**
 * The SQL that reads a stored row's labels for analysisInput, null when it has none; `alias` is the table's
 * alias with its dot ("c."). A pull request's labels describe the change (a `bug` label marks a fix, not a
 * report), so they name no kind of it: its text decides, as the tracker's adaptation leaves pull requests out
 * (kind-adaptation.ts).
 */
export const labelsColumn = (alias = "") =>
  `CASE WHEN ${alias}metadata->>'pull_request' = 'true' THEN NULL ELSE ${alias}metadata->'labels' END AS labels`;

/** A statement of the chunk's transaction waits at most this long (a lock held by a deletion, say). */
export const STATEMENT_TIMEOUT_MS = 60_000;

/**
 * Enriches the given stored rows. Reads and writes go through the driver's pool (`AppDeps.pool`):
 * the chunk's vectors travel as one binary `real[]` and its units as one JSON text, which the driver sends as they are.
 */
export async function enrichContent(
  pool: pg.Pool,
  embedder: EmbeddingProvider,
  contentIds: string[],
  analyse: Analyser = analyseInline,
  chunkRows = ENRICH_CHUNK,
): Promise<EnrichmentResult> {
  const ids = [...new Set(contentIds)];
  const result: EnrichmentResult = { requested: ids.length, enriched: 0, alreadyEnriched: 0, missing: 0, unitsInserted: 0 };
  for (let i = 0; i < ids.length; i += chunkRows) {
    const chunk = ids.slice(i, i + chunkRows);
    const { rows } = await pool.query<StoredRow>(
      `SELECT c.id, c.entity_id AS "entityId", c.title, c.content, e.embedding_model AS "embeddingModel",
         e.enriched_at AS "enrichedAt", ${labelsColumn("c.")}
       FROM content_store c LEFT JOIN content_enrichment e ON e.content_id = c.id WHERE c.id = ANY($1::uuid[])`,
      [chunk],
    );
    result.missing += chunk.length - rows.length;
    const todo = rows.filter((r) => r.enrichedAt === null || r.embeddingModel !== embedder.model);
    result.alreadyEnriched += rows.length - todo.length;
    if (todo.length === 0) continue;

    // Work that can fail (a remote embedder) happens before anything is written.
    const [vectors, analysed] = await Promise.all([embedder.embed(todo.map(embeddingText)), analyse(todo.map(analysisInput))]);
    const units = unitsToWrite(todo, analysed);

    await poolTransaction(pool, STATEMENT_TIMEOUT_MS, async (client) => {
      // The rows are locked as the update would lock them, and only those still stored get units: a
      // row deleted meanwhile (src/governance/deletion) must not leave units of its words behind.
      const present = await lockForUnits(
        client,
        todo.map((r) => r.id),
      );
      // One statement for the chunk. Conditional, so a concurrent run of the same ids (a re-delivered
      // job) writes nothing twice; the vectors travel as one flat array, sliced per row by its position.
      const writes = todo.flatMap((row, index) =>
        present.has(row.id) ? [{ id: row.id, vector: vectors[index] ?? [], reading: analysed[index]?.kind ?? null }] : [],
      );
      result.missing += todo.length - writes.length;
      if (writes.length === 0) return;
      const dims = writes[0]!.vector.length;
      if (writes.some((w) => w.vector.length !== dims)) throw new Error("embedding vectors of one chunk differ in length");
      // The enrichment row is new (the original's first enrichment) or replaced (an older embedding model).
      const updated = await client.query<{ id: string }>(
        `INSERT INTO content_enrichment AS e (content_id, entity_id, platform, created_at, embedding, embedding_model,
           enriched_at, feedback_kind, feedback_kind_confidence)
         SELECT c.id, c.entity_id, c.platform, c.created_at, ($1::real[])[(u.ord - 1) * $2::int + 1 : u.ord * $2::int], $3,
           $6::timestamptz, u.kind, u.confidence
         FROM unnest($4::uuid[], $5::text[], $7::real[]) WITH ORDINALITY AS u(id, kind, confidence, ord)
         JOIN content_store c ON c.id = u.id
         ON CONFLICT (content_id) DO UPDATE SET embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model,
           enriched_at = EXCLUDED.enriched_at, feedback_kind = EXCLUDED.feedback_kind,
           feedback_kind_confidence = EXCLUDED.feedback_kind_confidence
         WHERE e.enriched_at IS NULL OR e.embedding_model IS NULL OR e.embedding_model <> $3
         RETURNING e.content_id AS id`,
        [
          flatVectorBinary(
            writes.map((w) => w.vector),
            dims,
          ),
          dims,
          embedder.model,
          writes.map((w) => w.id),
          writes.map((w) => w.reading?.kind ?? null),
          new Date(),
          writes.map((w) => (w.reading ? storedConfidence(w.reading.confidence) : null)),
        ],
      );
      result.enriched += updated.rows.length;
      result.alreadyEnriched += writes.length - updated.rows.length;
      // The units last: their rollup trigger serialises the writers of one entity until commit
      // (migration 20261122182000), so the update above is not part of that wait.
      const kept = units.filter((u) => present.has(u.contentId));
      if (kept.length > 0) result.unitsInserted += await insertUnits(client, kept, present);
    });
  }
  return result;
}
