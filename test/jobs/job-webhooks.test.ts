import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processors } from "../../workers/processors.js";
import { type Fake, hackernewsFake, hnStories } from "../collection/fakes.js";
import { createJob } from "../collection/support.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { FakeNotesProvider, makeNote } from "../notes/fake-provider.js";
import { onboardCompany } from "../runs/helpers.js";
import { bearer, registerEndpoint, startReceiver, until } from "../webhooks/support.js";

/**
 * The lifecycle tells the workspace's webhooks when any kind of job ends: a collection job and
 * the workflow run around it completing, an analysis cancelled, a meeting-note sync failing.
 * Each delivery is verified with the independent `standardwebhooks` implementation.
 */
const API_KEY = `grn_${randomUUID().replaceAll("-", "")}`;
let h: Harness;
let hn: Fake;
let provider: FakeNotesProvider;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  hn = await hackernewsFake(() => hnStories(3, "acme"));
  provider = new FakeNotesProvider(API_KEY);
  const notesUrl = await provider.start();
  provider.notes.push(makeNote(1));
  receiver = await startReceiver();
  h = await createHarness({
    HACKERNEWS_API_URL: `${hn.url}/api/v1`,
    COLLECTOR_MAX_PAGES: "1",
    COLLECTOR_REQUESTS_PER_SECOND: "1000",
    MEETINGNOTES_API_URL: notesUrl,
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
  });
  h.startWorkers(processors, 4);
});
afterAll(async () => {
  await h?.close();
  await hn?.close();
  await provider?.close();
  await receiver?.close();
});

interface Message {
  type: string;
  timestamp: string;
  data: Record<string, unknown> & { id: string; kind: string; status: string; workspace_id: string };
}

describe("job ends reach the workspace's webhooks", { timeout: 90_000 }, () => {
  it("delivers signed events for collection jobs, workflow runs, analyses and meeting-note syncs", async () => {
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 1000 });
    const endpoint = await registerEndpoint(h, ctx.token, ctx.workspaceId, { url: receiver.url });
    const verifier = new Webhook(endpoint.secret);
    const messages = () => receiver.received.map((r) => verifier.verify(r.body, r.headers as Record<string, string>) as Message);
    const awaitType = (type: string, id?: string) =>
      until(async () => messages().find((m) => m.type === type && (id === undefined || m.data.id === id)), 30_000);

    // A collection job completes.
    const job = await createJob(h, ctx.token, {
      entity_id: ctx.entityId,
      objective: "What do developers say?",
      platforms: ["hackernews"],
      collection_only: true,
    });
    expect(job.status).toBe(200);
    const collected = await awaitType("collection_job.completed", job.body.job_id);
    expect(collected.data).toMatchObject({
      kind: "collection_job",
      status: "completed",
      workspace_id: ctx.workspaceId,
      entity_id: ctx.entityId,
    });

    // A workflow run completes; its own collection job and analysis report too.
    const skillId = ctx.skills[0]!.id;
    const quote = await h.http.get(`/api/entities/${ctx.entityId}/skills/${skillId}/quote?source_mode=refresh`).set(bearer(ctx.token));
    const run = await h.http
      .post(`/api/entities/${ctx.entityId}/skills/${skillId}/runs`)
      .set(bearer(ctx.token))
      .set("Idempotency-Key", randomId("hooks-"))
      .send({ scope_hash: quote.body.scope_hash, max_charge_credits: quote.body.max_charge_credits });
    expect(run.status).toBe(202);
    const ranMessage = await awaitType("workflow_run.completed", run.body.id);
    expect(ranMessage.data.charged_credits).toEqual(expect.any(Number));
    const finishedRun = await h.deps.db.workflowRun.findUniqueOrThrow({ where: { id: run.body.id } });
    await awaitType("collection_job.completed", finishedRun.collectionJobId as string);
    expect(messages().some((m) => m.data.id === finishedRun.analysisId && m.type.startsWith("analysis."))).toBe(true);

    // An analysis cancelled while queued (no request of the analysis route is left waiting on it).
    const user = await h.deps.db.user.findFirstOrThrow({ where: { memberships: { some: { workspaceId: ctx.workspaceId } } } });
    const analysis = await h.deps.db.analysis.create({
      data: { userId: user.id, workspaceId: ctx.workspaceId, entityId: ctx.entityId, question: "Held back", status: "queued" },
    });
    const cancelled = await h.http.post(`/agent/v1/analysis/${analysis.id}/cancel`).set(bearer(ctx.token));
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    await awaitType("analysis.cancelled", analysis.id);

    // A meeting-note sync fails: the provider refuses the key.
    const requestId = randomId("hooks-sync-");
    const refused = await h.http
      .post("/api/meetingnotes/sync")
      .set(bearer(ctx.token))
      .send({ api_key: "grn_wrong-key-0000000000000000", entity_id: ctx.entityId, max_notes: 5, request_id: requestId });
    expect(refused.status).toBe(502);
    const failedSync = await awaitType("note_sync.failed");
    expect(failedSync.data).toMatchObject({ kind: "note_sync", status: "failed", entity_id: ctx.entityId, attempt: 1, retry_of: null });

    // Retried under the same request_id: a new attempt, which ends with its own id; the failed sync's end is not announced again.
    const retried = await h.http
      .post("/api/meetingnotes/sync")
      .set(bearer(ctx.token))
      .send({ api_key: API_KEY, entity_id: ctx.entityId, max_notes: 5, request_id: requestId });
    expect([200, 202]).toContain(retried.status);
    const completedSync = await awaitType("note_sync.completed");
    expect(completedSync.data).toMatchObject({ kind: "note_sync", status: "completed", attempt: 2, retry_of: failedSync.data.id });
    expect(completedSync.data.id).not.toBe(failedSync.data.id);
    expect(
      messages()
        .filter((m) => m.data.id === failedSync.data.id)
        .map((m) => m.type),
    ).toEqual(["note_sync.failed"]);

    // One delivery per event: the same webhook-id is never used twice for different messages.
    const ids = receiver.received.map((r) => r.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
