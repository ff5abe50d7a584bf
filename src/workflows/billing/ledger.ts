import type { Db, DbTx } from "../../platform/db.js";

/**
 * Credits: an append-only ledger per workspace. A grant adds credits; a run reserves its approved
 * maximum (negative), and when it ends the reservation is released (positive) and the actual cost
 * settled (negative). The balance is always the sum of the entries; nothing is ever updated.
 */
export type LedgerKind = "grant" | "reserve" | "release" | "settle";

export async function balance(db: Db | DbTx, workspaceId: string): Promise<number> {
  const rows = await db.$queryRaw<{ balance: bigint | null }[]>`
    SELECT COALESCE(SUM(amount), 0)::bigint AS balance FROM credit_ledger WHERE workspace_id = ${workspaceId}::uuid`;
  return Number(rows[0]?.balance ?? 0);
}

/** Serialises ledger writes of one workspace inside the caller's transaction. */
export async function lockWorkspaceLedger(tx: DbTx, workspaceId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`ledger:${workspaceId}`}))`;
}

export async function appendEntry(
  tx: DbTx,
  entry: { workspaceId: string; kind: LedgerKind; amount: number; runId?: string; note?: string },
): Promise<void> {
  await tx.creditLedger.create({
    data: { workspaceId: entry.workspaceId, kind: entry.kind, amount: entry.amount, runId: entry.runId ?? null, note: entry.note ?? null },
  });
}

export async function grantCredits(db: Db, workspaceId: string, amount: number, note?: string): Promise<number> {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error("amount must be a positive whole number of credits");
  return db.$transaction(async (tx) => {
    await lockWorkspaceLedger(tx, workspaceId);
    await appendEntry(tx, { workspaceId, kind: "grant", amount, note: note ?? "operator grant" });
    return balance(tx, workspaceId);
  });
}

export async function ledgerEntries(db: Db, workspaceId: string, limit = 100) {
  return db.creditLedger.findMany({ where: { workspaceId }, orderBy: { id: "desc" }, take: limit });
}
