import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { Prisma, PrismaClient } from "../generated/prisma/client.js";

export { Prisma, PrismaClient };
export type Db = PrismaClient;
/** A client or an interactive transaction: services accept either. */
export type DbTx = Prisma.TransactionClient;

export function createDb(url: string, poolSize = 10): Db {
  return createDatabase(url, poolSize).db;
}

/**
 * A client and the driver's pool under it, sharing its connections (and its size): the pool serves
 * what Prisma cannot express, such as `COPY … FROM STDIN` (src/intake/ingest/copy.ts). The client's
 * `$disconnect` ends the pool.
 */
export function createDatabase(url: string, poolSize = 10): { db: Db; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle connection that the server ends (a restart, a terminated backend) is dropped from the pool,
  // which then emits the error; without a listener that would end the process. The next checkout opens a
  // new connection, and a statement that fails meets its error where it runs.
  pool.on("error", () => {});
  return { db: new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) }), pool };
}

/**
 * `work` in one transaction on a connection of the driver's pool, each statement bounded by
 * `statementTimeoutMs`: committed when it returns, rolled back (and its error rethrown) when it throws. A
 * connection lost mid-transaction fails the statement in flight, and one that cannot even roll back is
 * not given back to the pool.
 */
export async function poolTransaction<T>(
  pool: pg.Pool,
  statementTimeoutMs: number,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  // The client's own error event (which would otherwise end the process) carries nothing the failed
  // statement does not.
  const ignore = () => {};
  client.on("error", ignore);
  let broken = false;
  try {
    await client.query(`BEGIN; SET LOCAL statement_timeout = ${Math.trunc(statementTimeoutMs)}`);
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    client.off("error", ignore);
    client.release(broken);
  }
}

/** True when a thrown value is a unique-constraint violation (Prisma P2002 or Postgres 23505). */
export function isUniqueViolation(err: unknown): boolean {
  if (err instanceof Prisma.PrismaClientKnownRequestError) {
    if (err.code === "P2002") return true;
    const meta = err.meta as { code?: string; driverAdapterError?: { cause?: { originalCode?: string } } } | undefined;
    if (meta?.code === "23505" || meta?.driverAdapterError?.cause?.originalCode === "23505") return true;
  }
  return (err as { code?: string } | null)?.code === "23505";
}

/** True when a thrown value means the database could not be reached. */
export function isDbUnavailable(err: unknown): boolean {
  if (err instanceof Prisma.PrismaClientInitializationError) return true;
  const text = String((err as { message?: string } | null)?.message ?? "");
  const code = (err as { code?: string } | null)?.code ?? "";
  return (
    ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "P1001", "P1002", "P1017", "57P01", "57P03"].includes(code) ||
    /ECONNREFUSED|Can't reach database|Connection terminated|connect ETIMEDOUT|DatabaseNotReachable|the database system is (starting up|shutting down)/i.test(
      text,
    )
  );
}
