import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { byDedupKey, type PlannedRow } from "./plan.js";
import type { RunFields, WriteResult } from "./sql.js";

/**
 * The batch's new rows written with `COPY … FROM STDIN`, inside a transaction on a connection of the
 * driver's pool: PostgreSQL inserts them in multi-row batches, about a fifth less of its CPU per row
 * than the row-by-row `INSERT … ON CONFLICT` of `insertRows` (docs/benchmarks.md, "Ingest throughput").
 * The rows already stored are read first (one statement, key-share locked as `insertRows` locks
 * them, so a deletion running meanwhile either finds this batch's comments or has removed the
 * original first). COPY has no ON CONFLICT: a key that a concurrent batch stores after that read
 * fails the COPY with a unique violation, and the caller then stores the batch through `insertRows`,
 * which settles such races.
 */
export const CONTENT_COPY_COLUMNS = [
  "id",
  "entity_id",
  "workspace_id",
  "parent_id",
  "kind",
  "platform",
  "external_id",
  "url",
  "title",
  "content",
  "author",
  "published_at",
  "engagement",
  "metadata",
  "collection_run_id",
  "collection_scope",
  "coverage_state",
  "content_hash",
  "dedup_key",
] as const;

const COPY_SQL = `COPY content_store (${CONTENT_COPY_COLUMNS.join(", ")}) FROM STDIN`;

const SPECIAL = /[\\\n\r\t]/;
const SPECIALS = /[\\\n\r\t]/g;
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** One value in COPY's text format: backslash escapes, `\N` for NULL. */
export function copyField(value: string | null): string {
  if (value === null) return "\\N";
  return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPES[c] as string) : value;
}

/**
 * A stored original's COPY line (with its newline), in `CONTENT_COPY_COLUMNS` order. Ids, the kind,
 * hashes, keys and the ISO date never hold a tab, newline or backslash, so only the other values are
 * escaped.
 */
function writeCopyLine(
  out: CopyData,
  row: PlannedRow,
  ids: { id: string; parentId: string | null },
  entity: { id: string; workspaceId: string },
  kind: "source" | "comment",
  run: RunFields,
): void {
  out.raw(`${ids.id}\t${entity.id}\t${entity.workspaceId}\t${ids.parentId ?? "\\N"}\t${kind}\t`);
  out.field(row.platform);
  out.field(row.external_id);
  out.field(row.url);
  out.field(row.title);
  out.field(row.content);
  out.field(row.author);
  out.raw(`${row.published_at ?? "\\N"}\t`);
  out.field(JSON.stringify(row.engagement));
  out.field(row.metadata === null ? null : JSON.stringify(row.metadata));
  out.field(run.collectionRunId);
  out.field(run.collectionScope);
  out.field(run.coverageState);
  out.raw(`${row.content_hash}\t${row.dedup_key}\n`);
}

/**
 * COPY data written value by value into one growing buffer: each value is encoded once, straight into
 * place. A line built as one string and then encoded made a flat copy of every row's text first; lines
 * joined into one string and then encoded cost twice the time (3,000 rows: 3.4 against 6.5 ms) and held
 * the batch's text three times over.
 */
class CopyData {
  private buffer = Buffer.allocUnsafe(64 * 1024);
  private length = 0;

  /** Text that needs no escaping. */
  raw(text: string): void {
    // UTF-8 takes at most three bytes per UTF-16 code unit (a surrogate pair: four bytes for two units).
    const room = text.length * 3;
    if (this.buffer.length - this.length < room) {
      const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + room));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    this.length += this.buffer.write(text, this.length);
  }

  /** A value (escaped, NULL as `\N`) and the tab after it. */
  field(value: string | null): void {
    this.raw(copyField(value));
    this.raw("\t");
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

/**
 * The COPY data for the rows of a batch not yet stored (`stored`: dedup key → id of the rows that are):
 * sources, then comments, each in dedup-key order as `insertRows` inserts them (so two batches sharing
 * keys wait for each other in the same order), with a new id for each new row and every key's id.
 */
export function copyDataOf(
  entity: { id: string; workspaceId: string },
  rows: { sources: PlannedRow[]; comments: PlannedRow[] },
  run: RunFields,
  stored: ReadonlyMap<string, string>,
): { data: Buffer; sources: WriteResult; comments: WriteResult } {
  const sources: WriteResult = { ids: new Map(), inserted: new Set() };
  const comments: WriteResult = { ids: new Map(), inserted: new Set() };
  const data = new CopyData();
  for (const [kind, planned, result] of [
    ["source", rows.sources, sources],
    ["comment", rows.comments, comments],
  ] as const) {
    for (const row of [...planned].sort(byDedupKey)) {
      const id = stored.get(row.dedup_key);
      if (id) {
        result.ids.set(row.dedup_key, id);
        continue;
      }
      const newId = randomUUID();
      result.ids.set(row.dedup_key, newId);
      result.inserted.add(row.dedup_key);
      const parentId = row.parent_key === null ? null : (sources.ids.get(row.parent_key) ?? null);
      writeCopyLine(data, row, { id: newId, parentId }, entity, kind, run);
    }
  }
  return { data: data.bytes(), sources, comments };
}

/**
 * Writes the sources and their comments of one batch inside the caller's transaction on `client`:
 * reads the keys already stored, copies the rest (`copyDataOf`).
 */
export async function copyRows(
  client: pg.PoolClient,
  entity: { id: string; workspaceId: string },
  rows: { sources: PlannedRow[]; comments: PlannedRow[] },
  run: RunFields,
): Promise<{ sources: WriteResult; comments: WriteResult }> {
  const keys = [...rows.sources, ...rows.comments].map((row) => row.dedup_key);
  const existing = await client.query<{ id: string; dedup_key: string }>(
    `SELECT id, dedup_key FROM content_store
     WHERE entity_id = $1::uuid AND dedup_key = ANY($2::text[])
     ORDER BY dedup_key FOR KEY SHARE`,
    [entity.id, keys],
  );
  const stored = new Map(existing.rows.map((row) => [row.dedup_key, row.id]));
  const { data, sources, comments } = copyDataOf(entity, rows, run, stored);
  if (data.length > 0) await pipeline(Readable.from([data]), client.query(copyFrom(COPY_SQL)));
  return { sources, comments };
}
