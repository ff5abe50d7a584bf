import type pg from "pg";
import { jobIds } from "../../jobs/ids.js";
import { type DbTx, isUniqueViolation, Prisma, poolTransaction } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { copyRows } from "./copy.js";
import { type ErasedAuthors, erasedAuthors, erasedAuthorsVia } from "./erased-authors.js";
import { type BatchPlan, planBatch } from "./plan.js";
import { COUNT_BASIS, type IngestRequest, type IngestResponse } from "./schemas.js";
import { insertRows, type RunFields, type WriteResult } from "./sql.js";
import { ingestWriters } from "./writers.js";

/**
 * Atomic content ingest (spec operation 1). One transaction stores every source and its
 * comments or nothing; originals already stored for the entity are reused, never
 * rewritten. After commit the new rows are queued for enrichment (embedding, opinion
 * units); the answer never waits for it. Collectors and the notes import call this same
 * function from the worker. Items of authors erased in the workspace (src/governance/deletion) are not
 * stored, nor the comments of such a source: they are counted in `skipped_erased` and keep their
 * place in the positional id lists with an empty id.
 */
export type IngestDeps = Pick<AppDeps, "db" | "queues" | "logger" | "config"> & Partial<Pick<AppDeps, "pool">>;

export const ENRICHMENT_CHUNK = 5000;
const TX_OPTIONS = { maxWait: 10_000, timeout: 60_000 } as const;
const MAX_ATTEMPTS = 3;

/** Deadlocks and serialisation failures are safe to retry: the transaction left no trace. */
function isRetryable(err: unknown): boolean {
  const codes = new Set<string>();
  const add = (v: unknown) => typeof v === "string" && codes.add(v);
  const e = err as { code?: unknown; meta?: { code?: unknown; driverAdapterError?: { cause?: { originalCode?: unknown } } } } | null;
  add(e?.code);
  add(e?.meta?.code);
  add(e?.meta?.driverAdapterError?.cause?.originalCode);
  if (codes.has("40P01") || codes.has("40001") || codes.has("P2034")) return true;
  return err instanceof Prisma.PrismaClientKnownRequestError && /deadlock detected|could not serialize access/i.test(err.message);
}

export async function ingestContent(
  deps: IngestDeps,
  entity: { id: string; workspaceId: string },
  request: IngestRequest,
): Promise<IngestResponse> {
  return (await store(deps, entity, request, undefined)).answer;
}

/**
 * The same ingest, with more writes of the caller's in the same transaction: `alsoStore`
 * runs after the rows are written and sees the answer; if it throws, nothing of the batch
 * is stored either (the meeting-note import stores summaries and its page this way).
 */
export async function ingestContentWith<T>(
  deps: IngestDeps,
  entity: { id: string; workspaceId: string },
  request: IngestRequest,
  alsoStore: (tx: DbTx, answer: IngestResponse) => Promise<T>,
): Promise<{ answer: IngestResponse; extra: T }> {
  return store(deps, entity, request, alsoStore);
}

type Outcome<T> = { answer: IngestResponse; newIds: string[]; extra: T };

/**
 * A batch without writes of the caller's is copied (`copyRows`, on the driver's pool) when the
 * process has the pool; a batch with them, or one whose copy met a concurrent batch's keys, is
 * written through Prisma (`insertRows`, retried on deadlocks).
 */
async function store<T>(
  deps: IngestDeps,
  entity: { id: string; workspaceId: string },
  request: IngestRequest,
  alsoStore: ((tx: DbTx, answer: IngestResponse) => Promise<T>) | undefined,
): Promise<{ answer: IngestResponse; extra: T }> {
  const plan = planBatch(request);
  const run = {
    collectionRunId: request.collection_run_id ?? null,
    collectionScope: request.collection_scope ?? null,
    coverageState: request.coverage_state ?? null,
  };

  // The batch waits its turn among the process's writers (writers.ts), then writes.
  const queued = performance.now();
  let started = queued;
  const outcome = await ingestWriters(
    deps.db,
    deps.config.INGEST_WRITERS,
  )(() => {
    started = performance.now();
    return write(deps, entity, plan, run, alsoStore);
  });
  const txMs = Math.round(performance.now() - started);
  await enqueueEnrichment(deps, entity.id, outcome.newIds);
  deps.logger.debug(
    {
      entityId: entity.id,
      received: outcome.answer.total_received,
      inserted: outcome.answer.inserted,
      attempts: outcome.attempts,
      turnMs: Math.round(started - queued),
      txMs,
    },
    "ingest batch stored",
  );
  return { answer: outcome.answer, extra: outcome.extra };
}

/** The batch's rows, copied or written through Prisma (retried on deadlocks), in one transaction; no enqueue. */
async function write<T>(
  deps: IngestDeps,
  entity: { id: string; workspaceId: string },
  plan: BatchPlan,
  run: RunFields,
  alsoStore: ((tx: DbTx, answer: IngestResponse) => Promise<T>) | undefined,
): Promise<Outcome<T> & { attempts: number }> {
  let attempt = 0;
  let outcome: Outcome<T> | null = null;
  if (!alsoStore && deps.pool) outcome = (await copyBatch(deps.pool, deps, entity, plan, run)) as Outcome<T> | null;
  while (!outcome) {
    attempt += 1;
    try {
      outcome = await deps.db.$transaction(async (tx) => {
        const platforms = plan.sources.map((row) => row.platform);
        const kept = withoutErased(plan, await erasedAuthors(tx, deps.config, entity.workspaceId, platforms));
        const sources = await insertRows(
          tx,
          entity,
          "source",
          kept.sources.map((row) => ({ ...row, parent_id: null })),
          run,
        );
        const comments = await insertRows(
          tx,
          entity,
          "comment",
          kept.comments.map((row) => ({ ...row, parent_id: sources.ids.get(row.parent_key ?? "") ?? null })),
          run,
        );
        const written = outcomeOf(plan, sources, comments);
        return { ...written, extra: alsoStore ? await alsoStore(tx, written.answer) : (undefined as T) };
      }, TX_OPTIONS);
    } catch (err) {
      if (attempt >= MAX_ATTEMPTS || !isRetryable(err)) throw err;
      deps.logger.warn({ entityId: entity.id, attempt, err: (err as Error).message }, "ingest transaction retried");
    }
  }
  return { ...outcome, attempts: attempt };
}

/** The answer and the new rows' ids, from what each kind's write stored. */
function outcomeOf(plan: BatchPlan, sources: WriteResult, comments: WriteResult): Omit<Outcome<unknown>, "extra"> {
  const ids = new Map([...sources.ids, ...comments.ids]);
  // An erased item keeps its place in the positional lists, with no id.
  const idOf = (key: string) => ids.get(key) ?? "";
  const newIds = [...sources.inserted, ...comments.inserted].map(idOf);
  const answer = buildAnswer(plan.sourceKeys.map(idOf), plan.commentKeys.map(idOf), newIds.length, comments.inserted.size);
  return { answer, newIds };
}

/**
 * The batch in one transaction on a connection of the driver's pool: the erasures read (with their
 * shared lock) as `erasedAuthors` reads them, then `copyRows`. Answers null, with nothing stored,
 * when the copy met a key a concurrent batch stored meanwhile (or any error the Prisma path retries):
 * the caller then writes the batch through `insertRows`.
 */
async function copyBatch(
  pool: pg.Pool,
  deps: Pick<IngestDeps, "config" | "logger">,
  entity: { id: string; workspaceId: string },
  plan: BatchPlan,
  run: RunFields,
): Promise<Outcome<undefined> | null> {
  try {
    // Each statement gets the row-by-row path's transaction bound, so a batch waiting on a lock does not
    // hold its connection for ever.
    return await poolTransaction(pool, TX_OPTIONS.timeout, async (client) => {
      const platforms = plan.sources.map((row) => row.platform);
      const erased = await erasedAuthorsVia(
        async (sql, params) => (await client.query(sql, params)).rows,
        deps.config,
        entity.workspaceId,
        platforms,
      );
      const { sources, comments } = await copyRows(client, entity, withoutErased(plan, erased), run);
      return { ...outcomeOf(plan, sources, comments), extra: undefined };
    });
  } catch (err) {
    if (!isUniqueViolation(err) && !isRetryable(err)) throw err;
    deps.logger.warn({ entityId: entity.id, err: (err as Error).message }, "ingest copy met a concurrent batch; written row by row");
    return null;
  }
}

/** The plan without the rows of erased authors, nor the comments of an erased author's source. */
function withoutErased(plan: BatchPlan, erased: ErasedAuthors): Pick<BatchPlan, "sources" | "comments"> {
  const sources = plan.sources.filter((row) => !erased(row.platform, row.author));
  const keptSources = new Set(sources.map((row) => row.dedup_key));
  const comments = plan.comments.filter((row) => keptSources.has(row.parent_key ?? "") && !erased(row.platform, row.author));
  return { sources, comments };
}

function buildAnswer(parentIds: string[], commentIds: string[], inserted: number, commentsInserted: number): IngestResponse {
  const totalReceived = parentIds.length + commentIds.length;
  const contentIds = [...parentIds, ...commentIds].filter((id) => id !== "");
  const stored = contentIds.length;
  return {
    inserted,
    skipped_dedup: stored - inserted,
    skipped_irrelevant: 0,
    skipped_erased: totalReceived - stored,
    total_received: totalReceived,
    stored,
    content_ids: contentIds,
    parent_content_ids: parentIds,
    comment_content_ids: commentIds,
    comments_received: commentIds.length,
    comments_inserted: commentsInserted,
    complete: true,
    count_basis: COUNT_BASIS,
  };
}

/**
 * Queues the new rows for enrichment in chunks the job catalog accepts. The rows are
 * committed already: if the queue is unreachable the failure is logged and the rows
 * stay, shown as unenriched by the completeness audit until they are queued again.
 */
export async function enqueueEnrichment(deps: Pick<AppDeps, "queues" | "logger">, entityId: string, contentIds: string[]): Promise<void> {
  for (let i = 0; i < contentIds.length; i += ENRICHMENT_CHUNK) {
    const chunk = contentIds.slice(i, i + ENRICHMENT_CHUNK);
    try {
      await deps.queues.enqueue("enrichment.content.v1", { contentIds: chunk }, { jobId: jobIds.enrichment(chunk) });
    } catch (err) {
      deps.logger.error(
        {
          entityId,
          rows: chunk.length,
          firstContentId: chunk[0],
          err: (err as Error).message,
          cause: (err as { cause?: Error }).cause?.message,
        },
        "enrichment could not be queued; the stored rows remain unenriched",
      );
    }
  }
}
