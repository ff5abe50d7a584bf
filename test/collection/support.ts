import { expect } from "vitest";
import type { Harness } from "../helpers/harness.js";

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

export async function newEntity(h: Harness, token: string, body: Record<string, unknown> = {}) {
  const res = await h.http
    .post("/api/entities")
    .set(bearer(token))
    .send({ name: "Acme", ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; workspace_id: string };
}

export async function createJob(h: Harness, token: string, body: Record<string, unknown>, path = "/agent/v1/ingest/collection/jobs") {
  return h.http.post(path).set(bearer(token)).send(body);
}

export interface JobStatus {
  job_id: string;
  status: string;
  stalled_reason: string | null;
  progress: Record<
    string,
    {
      status: string;
      coverage_state: string | null;
      reason: string | null;
      error: string | null;
      pages: number;
      found: number;
      stored: number;
      inserted: number;
      deduplicated: number;
    }
  >;
  counts: { found: number; stored: number; inserted: number; deduplicated: number };
  coverage: Record<string, string | null>;
  errors: { platform: string | null; detail: string }[];
  analysis_id: string;
  next: string;
  attempts: number;
  attempt: number;
  retry_of: string | null;
}

/** Polls the status route until `done` holds (bounded deadline, no fixed sleeps). */
export async function pollJob(
  h: Harness,
  token: string,
  jobId: string,
  done: (s: JobStatus) => boolean = (s) => s.status === "completed" || s.status === "failed",
  timeoutMs = 20_000,
): Promise<JobStatus> {
  const deadline = Date.now() + timeoutMs;
  let last: JobStatus | undefined;
  while (Date.now() < deadline) {
    const res = await h.http.get(`/agent/v1/ingest/collection/jobs/${jobId}`).set(bearer(token));
    expect(res.status).toBe(200);
    last = res.body as JobStatus;
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${jobId} did not reach the expected state in time; last: ${JSON.stringify(last)}`);
}

/** Resolves when `check` holds, polling with a bounded deadline. */
export async function until<T>(check: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("condition not met in time");
}

export async function coverageOf(h: Harness, entityId: string, runId: string) {
  const rows = await h.deps.db.coverageRecord.findMany({
    where: { entityId, runId },
    include: { targets: { orderBy: { position: "asc" } } },
  });
  return Object.fromEntries(rows.map((r) => [r.collector, r]));
}

export async function contentRows(h: Harness, entityId: string, platform?: string) {
  return h.deps.db.content.findMany({
    where: { entityId, ...(platform ? { platform } : {}) },
    select: {
      id: true,
      kind: true,
      parentId: true,
      externalId: true,
      platform: true,
      title: true,
      content: true,
      collectionRunId: true,
      metadata: true,
    },
    orderBy: { createdAt: "asc" },
  });
}
