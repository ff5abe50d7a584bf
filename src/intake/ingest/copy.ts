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
 * A stored original's COPY line, in `CONTENT_COPY_COLUMNS` order. Ids, the kind, hashes, keys and the
 * ISO date never hold a tab, newline or backslash, so only the other values are escaped.
 */
export function copyLine(
  row: PlannedRow,
  ids: { id: string; parentId: string | null },
  entity: { id: string; workspaceId: string },
  kind: "source" | "comment",
  run: RunFields,
): string {
  return (
    `${ids.id}\t${entity.id}\t${entity.workspaceId}\t${ids.parentId ?? "\\N"}\t${kind}\t${copyField(row.platform)}\t` +
    `${copyField(row.external_id)}\t${copyField(row.url)}\t${copyField(row.title)}\t${copyField(row.content)}\t` +
    `${copyField(row.author)}\t${row.published_at ?? "\\N"}\t${copyField(JSON.stringify(row.engagement))}\t` +
    `${copyField(row.metadata === null ? null : JSON.stringify(row.metadata))}\t${copyField(run.collectionRunId)}\t` +
    `${copyField(run.collectionScope)}\t${copyField(run.coverageState)}\t${row.content_hash}\t${row.dedup_key}`
  );
}

/**
 * COPY data written line by line into one growing buffer: each line is encoded once, straight into place,
 * where an array of lines joined into one string and then encoded cost twice the time (3,000 rows: 3.4 against
 * 6.5 ms) and held the batch's text three times over.
 */
class CopyData {
  private buffer = Buffer.allocUnsafe(64 * 1024);
  private length = 0;

  line(text: string): void {
    // UTF-8 takes at most three bytes per UTF-16 code unit (a surrogate pair: four bytes for two units).
    const room = text.length * 3 + 1;
    if (this.buffer.length - this.length < room) {
      const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + room));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    this.length += this.buffer.write(text, this.length);
    this.buffer[this.length++] = 0x0a;
  }

  get empty(): boolean {
    return this.length === 0;
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

/**
 * Writes the sources and their comments of one batch inside the caller's transaction on `client`:
 * reads the keys already stored, copies the rest (sources, then comments, each in dedup-key order as
 * `insertRows` inserts them, so two batches sharing keys wait for each other in the same order).
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
      data.line(copyLine(row, { id: newId, parentId }, entity, kind, run));
    }
  }
  if (!data.empty) await pipeline(Readable.from([data.bytes()]), client.query(copyFrom(COPY_SQL)));
  return { sources, comments };
}
