import { canonicalJson, sha256Hex } from "../../platform/canonical.js";
import type { Db, DbTx, Prisma } from "../../platform/db.js";
import { skillForUser, skillPath, workflowOf } from "../skills/service.js";
import { estimate, runScope, type SourceMode } from "./pricing.js";

/** A quote prices one run of a skill; its scope_hash pins the exact run scope it priced. */
export const QUOTE_TTL_MS = 15 * 60 * 1000;

export function scopeHash(scope: object): string {
  return sha256Hex("run-scope-v1", canonicalJson(scope));
}

/** The current scope of a skill, and its price. */
export async function currentScope(db: Db | DbTx, userId: string, entityId: string, skillId: string, sourceMode: SourceMode) {
  const { entity, skill } = await skillForUser(db, userId, entityId, skillId);
  const scope = runScope(skill, workflowOf(skill), entity.platforms, sourceMode);
  return { entity, skill, scope, hash: scopeHash(scope), price: estimate(scope) };
}

/** What a quote records: a skill's scope for one caller, priced. */
export interface PricedScope {
  skillId: string;
  entityId: string;
  userId: string;
  sourceMode: SourceMode;
  scope: object;
  hash: string;
  price: ReturnType<typeof estimate>;
}

/** Stores a quote for a priced scope, valid for QUOTE_TTL_MS from `now`. */
export function insertQuote(db: Db | DbTx, priced: PricedScope, now = new Date()) {
  const { price } = priced;
  return db.quote.create({
    data: {
      skillId: priced.skillId,
      entityId: priced.entityId,
      userId: priced.userId,
      sourceMode: priced.sourceMode,
      estimatedCredits: price.estimated,
      maxChargeCredits: price.maximum,
      scopeHash: priced.hash,
      breakdown: { ...price.breakdown, scope: priced.scope } as unknown as Prisma.InputJsonValue,
      expiresAt: new Date(now.getTime() + QUOTE_TTL_MS),
    },
  });
}

export async function createQuote(db: Db, userId: string, entityId: string, skillId: string, sourceMode: SourceMode) {
  return quoteFor(db, userId, await currentScope(db, userId, entityId, skillId, sourceMode), sourceMode);
}

/** Stores a quote of a skill's current scope and answers it as the quote route does. */
export async function quoteFor(
  db: Db | DbTx,
  userId: string,
  { skill, scope, hash, price }: Awaited<ReturnType<typeof currentScope>>,
  sourceMode: SourceMode,
) {
  const quote = await insertQuote(db, { skillId: skill.id, entityId: skill.entityId, userId, sourceMode, scope, hash, price });
  return {
    quote_id: quote.id,
    skill_id: skill.key,
    entity_id: skill.entityId,
    source_mode: sourceMode,
    estimated_credits: price.estimated,
    max_charge_credits: price.maximum,
    scope_hash: hash,
    expires_at: quote.expiresAt.toISOString(),
    breakdown: { ...price.breakdown, scope },
    run_url: `${skillPath(skill.entityId, skill.key)}/runs`,
  };
}
