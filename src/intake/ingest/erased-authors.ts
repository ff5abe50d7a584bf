import { createHmac, hkdfSync } from "node:crypto";
import type { Config } from "../../platform/config.js";
import type { DbTx } from "../../platform/db.js";
import { AppError } from "../../platform/errors.js";

/**
 * Erased authors: an erasure keeps only an HMAC-SHA256 of the author's normalised handle, keyed by a
 * key derived from `SECRETS_KEY` (HKDF, its own label) and bound to the workspace and platform, so the
 * stored value neither reveals the handle nor confirms a guess without the server's secret. Every
 * store path (the ingest service, hence collectors and the notes import, and observations) asks
 * `erasedAuthors` before writing, under a shared advisory lock of the workspace that the recording of
 * an erasure takes exclusively: an ingest either finished before the erasure found the author's rows,
 * or it sees the erasure.
 */
export interface ErasureKey {
  key: Buffer;
  /** A short public name of the key (not the key): erasures made under another key are noticed. */
  id: string;
}

const SALT = "research-evidence/author-erasure";
const INFO = "author-hash/v1";

export function erasureKey(config: Pick<Config, "SECRETS_KEY">): ErasureKey | undefined {
  if (!config.SECRETS_KEY) return undefined;
  const key = Buffer.from(hkdfSync("sha256", Buffer.from(config.SECRETS_KEY, "utf8"), SALT, INFO, 32));
  return { key, id: createHmac("sha256", key).update("key-id").digest("hex").slice(0, 16) };
}

/** How handles compare: trimmed, NFC, lower case ("Alice ", "alice" and "ALICE" are one author). */
export const normaliseAuthor = (author: string) => author.trim().normalize("NFC").toLowerCase();

export function authorHash(key: ErasureKey, workspaceId: string, platform: string, author: string): string {
  return createHmac("sha256", key.key)
    .update(`${workspaceId}\u0000${platform}\u0000${normaliseAuthor(author)}`)
    .digest("hex");
}

export const keyMissing = () =>
  new AppError("service_unavailable", "Author erasure is not configured on this server: the operator must set SECRETS_KEY.");

/**
 * Takes the workspace's erasure lock exclusively, for the transaction that records an erasure (ingests
 * take it shared in `author_erasures_for`, migration 20261128100000, with the same key).
 */
export async function lockErasures(tx: DbTx, workspaceId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended('author-erasures:' || ${workspaceId}::uuid::text, 0))`;
}

/** Whether an item by `author` on `platform` belongs to an erased author. */
export type ErasedAuthors = (platform: string, author: string) => boolean;

export const NONE_ERASED: ErasedAuthors = () => false;

/**
 * The workspace's erased authors on these platforms, inside the caller's transaction (which then
 * holds the shared lock until it commits). Without erasures nothing is hashed. Erasures this server
 * cannot check (no SECRETS_KEY, or another one than they were made with) refuse the write with a
 * 503 rather than let an erased author back in.
 */
export async function erasedAuthors(
  tx: DbTx,
  config: Pick<Config, "SECRETS_KEY">,
  workspaceId: string,
  platforms: string[],
): Promise<ErasedAuthors> {
  return erasedAuthorsVia((sql, params) => tx.$queryRawUnsafe<ErasureRow[]>(sql, ...params), config, workspaceId, platforms);
}

interface ErasureRow {
  platform: string;
  author_hash: string;
  hash_key_id: string;
}
const ERASURES_SQL = "SELECT platform, author_hash, hash_key_id FROM author_erasures_for($1::uuid, $2::text[])";

/** The same, through any connection in the caller's transaction (the driver's, for the ingest's COPY path). */
export async function erasedAuthorsVia(
  query: (sql: string, params: unknown[]) => Promise<ErasureRow[]>,
  config: Pick<Config, "SECRETS_KEY">,
  workspaceId: string,
  platforms: string[],
): Promise<ErasedAuthors> {
  if (platforms.length === 0) return NONE_ERASED;
  const rows = await query(ERASURES_SQL, [workspaceId, [...new Set(platforms)]]);
  if (rows.length === 0) return NONE_ERASED;
  const key = erasureKey(config);
  if (!key) throw keyMissing();
  if (rows.some((r) => r.hash_key_id !== key.id)) {
    throw new AppError(
      "service_unavailable",
      "Authors were erased in this workspace under another SECRETS_KEY; this server cannot tell whether the items are theirs, so nothing was stored.",
    );
  }
  const erased = new Set(rows.map((r) => `${r.platform}\u0000${r.author_hash}`));
  const cache = new Map<string, boolean>();
  return (platform, author) => {
    if (!normaliseAuthor(author)) return false;
    const k = `${platform}\u0000${author}`;
    let hit = cache.get(k);
    if (hit === undefined) {
      hit = erased.has(`${platform}\u0000${authorHash(key, workspaceId, platform, author)}`);
      cache.set(k, hit);
    }
    return hit;
  };
}
