import { type ApiKeyScope, generateApiKey, hashApiKey } from "../../platform/auth.js";
import type { Db } from "../../platform/db.js";
import { notFound } from "../../platform/errors.js";
import { auditForMember } from "../workspaces/audit.js";
import type { ApiKeyRecord } from "./schemas.js";

/** Scoped API keys: created once (raw value shown once), listed masked, revoked, audited. */
interface KeyRow {
  id: string;
  name: string;
  keyPrefix: string;
  scopes: string[];
  isActive: boolean;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

const toRecord = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  key_prefix: row.keyPrefix,
  scopes: row.scopes as ApiKeyScope[],
  is_active: row.isActive,
  created_at: row.createdAt.toISOString(),
  revoked_at: row.revokedAt?.toISOString() ?? null,
  last_used_at: row.lastUsedAt?.toISOString() ?? null,
});

export async function createKey(db: Db, userId: string, input: { name: string; scopes: ApiKeyScope[] }) {
  const raw = generateApiKey();
  const row = await db.$transaction(async (tx) => {
    const created = await tx.apiKey.create({
      data: { userId, name: input.name, scopes: input.scopes, keyHash: hashApiKey(raw), keyPrefix: raw.slice(0, 12) },
    });
    // A key acts in every workspace of its user: each of them records it.
    await auditForMember(tx, userId, "key.created", created.id, { name: input.name, scopes: input.scopes, key_prefix: created.keyPrefix });
    return created;
  });
  return { key: toRecord(row), raw_key: raw };
}

export async function listKeys(db: Db, userId: string) {
  const rows = await db.apiKey.findMany({ where: { userId }, orderBy: [{ createdAt: "desc" }, { id: "asc" }] });
  return { keys: rows.map(toRecord) };
}

async function ownedKey(db: Db, userId: string, keyId: string) {
  const row = await db.apiKey.findFirst({ where: { id: keyId, userId } });
  if (!row) throw notFound("API key");
  return row;
}

/** Revokes a key at once; revoking an already revoked key answers the same record. */
export async function revokeKey(db: Db, userId: string, keyId: string) {
  const row = await ownedKey(db, userId, keyId);
  if (!row.isActive) return toRecord(row);
  const updated = await db.$transaction(async (tx) => {
    const revoked = await tx.apiKey.update({ where: { id: row.id }, data: { isActive: false, revokedAt: new Date() } });
    await auditForMember(tx, userId, "key.revoked", row.id, { name: row.name, key_prefix: row.keyPrefix });
    return revoked;
  });
  return toRecord(updated);
}

export async function keyUsage(db: Db, userId: string, keyId: string, page: { limit: number; offset: number }) {
  await ownedKey(db, userId, keyId);
  const [total, rows] = await Promise.all([
    db.apiKeyUsage.count({ where: { keyId } }),
    db.apiKeyUsage.findMany({ where: { keyId }, orderBy: { id: "desc" }, skip: page.offset, take: page.limit }),
  ]);
  const nextOffset = page.offset + rows.length < total ? page.offset + rows.length : null;
  return {
    key_id: keyId,
    total,
    limit: page.limit,
    offset: page.offset,
    next_offset: nextOffset,
    records: rows.map((r) => ({
      id: r.id.toString(),
      at: r.at.toISOString(),
      method: r.method,
      route: r.route,
      status_code: r.statusCode,
      scope_used: r.scopeUsed,
    })),
  };
}
