import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { exited, startWorkerProcess, until, type WorkerProcess } from "./support/processes.js";
import { type HackerNewsFake, hackerNewsCollector, startHackerNews } from "./support/upstream.js";

/**
 * A worker process killed mid-job. The worker runs as a real child process (the
 * `worker` entry of the Procfile, with the service's environment); it stores the first
 * page of a collection job, then waits on the upstream for the second. It is killed
 * with SIGKILL (no shutdown, no lock release). A second worker process picks the job
 * up once its lock lapses (BullMQ's stalled-job check), resumes from the stored cursor
 * and completes it: the job completes once, every story is stored exactly once.
 */
const PER_PAGE = 4;
const PAGES = 2;

let h: Harness;
let hn: HackerNewsFake;
const children: ChildProcess[] = [];
const workers: WorkerProcess[] = [];
const output = () => workers.map((w) => w.text()).join("");

beforeAll(async () => {
  hn = await startHackerNews(PER_PAGE, PAGES);
  h = await createHarness({
    ...hackerNewsCollector(hn, PER_PAGE, PAGES),
    // Long enough that a loaded machine's event loop (the child compiles TypeScript as it loads) still renews
    // the running job's lock: a second lapse would count as a second stall, which BullMQ fails.
    WORKER_LOCK_DURATION_MS: "3000",
    WORKER_STALLED_INTERVAL_MS: "1000",
    WORKER_CONCURRENCY: "2",
    LOG_LEVEL: "info",
  });
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await h?.close();
  await hn?.close();
});

/**
 * The worker entry (`workers/index.ts`) as one child process with the harness's environment.
 * Node loads TypeScript through tsx's loader (`--import tsx`) rather than the `tsx` command,
 * which runs the script in a grandchild that a SIGKILL of the command would not reach.
 */
function startWorker(): ChildProcess {
  const started = startWorkerProcess(h.config);
  workers.push(started);
  children.push(started.child);
  return started.child;
}

describe("a worker process killed mid-job", { timeout: 90_000 }, () => {
  it("has its job retried by another worker process, completed once, without duplicate rows", async () => {
    const token = await h.token();
    const auth = { Authorization: `Bearer ${token}` };
    const entity = await h.http
      .post("/api/entities")
      .set(auth)
      .send({ name: "Crashco", keywords: ["crashco"], platforms: ["hackernews"] });
    expect(entity.status).toBe(201);
    const created = await h.http
      .post("/agent/v1/ingest/collection/jobs")
      .set(auth)
      .send({
        entity_id: entity.body.id,
        objective: "What do people say about Crashco?",
        collection_only: true,
        idempotency_key: `crash-${randomUUID()}`,
      });
    expect(created.status).toBe(200);
    const jobId = created.body.job_id as string;
    const rows = () => h.deps.db.content.count({ where: { entityId: entity.body.id } });

    // Worker one stores page 0, then waits on page 1, which the upstream holds.
    hn.hold(1);
    const first = startWorker();
    await until("page 0 stored and page 1 requested", async () => hn.held >= 1 && (await rows()) === PER_PAGE, 30_000);
    const during = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } });
    expect(during).toMatchObject({ status: "running", attempts: 1 });

    first.kill("SIGKILL");
    await exited(first);
    expect(first.signalCode).toBe("SIGKILL");
    hn.release();

    // Worker two finds the job stalled once its lock lapses, and completes it.
    const second = startWorker();
    const done = await until(
      "the job completed by the second worker",
      async () => {
        const row = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } });
        return row.status === "completed" || row.status === "failed" ? row : undefined;
      },
      45_000,
    );
    expect(done.status, `${done.error}\n${output().slice(-3000)}`).toBe("completed");
    // Two claims: the killed run and the one that completed.
    expect(done.attempts, `${JSON.stringify(done.progress)}\n${output().slice(-4000)}`).toBe(2);
    // Every story exactly once: page 0 from the first run is not stored again.
    expect(await rows()).toBe(PER_PAGE * PAGES);
    const duplicates = await h.deps.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM (
        SELECT external_id FROM content_store WHERE entity_id = ${entity.body.id}::uuid GROUP BY external_id HAVING count(*) > 1
      ) d`;
    expect(duplicates[0]?.n).toBe(0);

    // The queue agrees: the job is completed, not waiting to run a third time. (The row is
    // written by the processor just before BullMQ moves the job, so the move may trail it.)
    const queueJob = await h.deps.queues.get("collection").getJob(done.queueJobId);
    const states: string[] = [];
    await until(
      "the queue entry completed",
      async () => {
        const state = await queueJob?.getState();
        states.push(String(state));
        return state === "completed" || state === "failed" || undefined;
      },
      5000,
    ).catch(() => undefined);
    const failedReason = (await h.deps.queues.get("collection").getJob(done.queueJobId))?.failedReason;
    expect(states.at(-1), `${states.join(",")} ${failedReason ?? ""}`).toBe("completed");
    const status = await h.http.get(`/agent/v1/ingest/collection/jobs/${jobId}`).set(auth);
    expect(status.body).toMatchObject({ status: "completed", counts: { stored: PER_PAGE * PAGES } });

    second.kill("SIGTERM");
    await exited(second);
    expect(second.exitCode).toBe(0);
  }, 90_000);
});
