import { createHash } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { Prisma, PrismaClient } from "../generated/prisma/client.js";
import { grouped } from "./grouped.js";

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
export function createDatabase(url: string, poolSize = 10, options: { namedStatements?: boolean } = {}): { db: Db; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  if (options.namedStatements === false) unnamedPools.add(pool);
  // An idle connection that the server ends (a restart, a terminated backend) is dropped from the pool,
  // which then emits the error; without a listener that would end the process. The next checkout opens a
  // new connection, and a statement that fails meets its error where it runs.
  pool.on("error", () => {});
  return { db: new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) }), pool };
}

/** Pools whose statements go unnamed (`DATABASE_NAMED_STATEMENTS=false`: a PgBouncer older than 1.21 in transaction mode). */
const unnamedPools = new WeakSet<pg.Pool>();
/** Statement names by text: only the fixed texts of hot paths come here, so the map stays small. */
const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `s_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * One statement of a hot path (a job's claim, settle, end) on the driver's pool as a named prepared
 * statement: each connection parses it once, and after five runs PostgreSQL reuses a generic plan, so
 * a run is a bind and an execute. Parsing and planning were about half of PostgreSQL's CPU on the
 * collection-job path (docs/benchmarks.md). Only for fixed texts whose best plan does not depend on the
 * values (lookups by primary key and the like): a generic plan is chosen without them.
 */
export async function queryNamed<R extends object>(pool: pg.Pool, text: string, values: readonly unknown[]): Promise<R[]> {
  const name = unnamedPools.has(pool) ? undefined : statementName(text);
  const result = await pool.query<R>({ name, text, values: values as unknown[] });
  return result.rows;
}

/** The grouped statements of `groupedRowsById`, per pool and statement text. */
const groupedStatements = new WeakMap<pg.Pool, Map<string, (key: never) => Promise<unknown>>>();

/**
 * A named statement answering at most one row per key (its `id` column), run for the calls that come at
 * once in one statement (`grouped`, with `idOf` naming a key's identity): one runner per pool and text, so
 * every caller of a process shares it. `values` gives the statement's parameters for a run's keys. Answers
 * the row of the key's id, or undefined.
 */
export function groupedRowsById<K, R extends { id: string }>(
  pool: pg.Pool,
  text: string,
  idOf: (key: K) => string,
  values: (keys: K[]) => readonly unknown[],
): (key: K) => Promise<R | undefined> {
  let byText = groupedStatements.get(pool);
  if (!byText) {
    byText = new Map();
    groupedStatements.set(pool, byText);
  }
  let run = byText.get(text) as ((key: K) => Promise<R | undefined>) | undefined;
  if (!run) {
    run = grouped(
      async (keys: K[]) => {
        const byId = new Map((await queryNamed<R>(pool, text, values(keys))).map((row) => [row.id, row]));
        // PostgreSQL answers a uuid in lower case, whatever case the caller named it in.
        return new Map(keys.map((key) => [key, byId.get(idOf(key).toLowerCase())]));
      },
      64,
      idOf,
    );
    byText.set(text, run);
  }
  return run;
}

/** `groupedRowsById` over an array of uuids (`$1`): a read by id, grouped. */
export function groupedById<R extends { id: string }>(pool: pg.Pool, text: string): (id: string) => Promise<R | undefined> {
  return groupedRowsById<string, R>(
    pool,
    text,
    (id) => id,
    (ids) => [ids],
  );
}

/** Where a statement built with `Prisma.sql` runs: a client or transaction, or the driver's pool (named, as `queryNamed`). */
export type SqlRunner = Db | DbTx | pg.Pool;

export async function querySql<R extends object>(runner: SqlRunner, sql: Prisma.Sql): Promise<R[]> {
  if (runner instanceof pg.Pool) return queryNamed<R>(runner, sql.text, sql.values);
  return runner.$queryRaw<R[]>(sql);
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
