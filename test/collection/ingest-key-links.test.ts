import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processors } from "../../workers/processors.js";
import { createKeyFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { type Fake, hackernewsFake, hnStories } from "./fakes.js";
import { newEntity, until } from "./support.js";

/**
 * A key that may create a collection job may follow every link the job hands out: an
 * `ingest` key creates a job, polls its `next`, reads the analysis the job's `next` points
 * at and replays that analysis's `events_url`, all with the same key. Other analyses of
 * the same account still need a bearer or a `*` key.
 */
let hn: Fake;
let h: Harness;
let token: string;
let ingestKey: string;

const withKey = (raw: string) => ({ "X-API-Key": raw });

beforeAll(async () => {
  hn = await hackernewsFake((q) => (q.includes("Linkco") ? hnStories(4, "k") : []));
  h = await createHarness({ HACKERNEWS_API_URL: `${hn.url}/api/v1`, COLLECTOR_REQUESTS_PER_SECOND: "1000" });
  h.startWorkers(processors, 2);
  token = await h.token();
  ingestKey = (await createKeyFor(h, token, ["ingest"])).raw_key;
});
afterAll(async () => {
  await h.close();
  await hn.close();
});

/** Follows `next` with the key until it leaves the poll route, answering the last poll. */
async function followToAnalysis(next: string, key: string) {
  const deadline = Date.now() + 30_000;
  let url = next;
  let last: { status: string; next: string; analysis_id: string } | undefined;
  while (url.startsWith("/agent/v1/ingest/")) {
    if (Date.now() > deadline) throw new Error(`job did not finish in time: ${JSON.stringify(last)}`);
    const res = await h.http.get(url).set(withKey(key));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    last = res.body;
    url = res.body.next;
    if (url.startsWith("/agent/v1/ingest/")) await new Promise((r) => setTimeout(r, 50));
  }
  return { url, job: last! };
}

async function finishedAnalysis(url: string, key: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await h.http.get(url).set(withKey(key));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (["completed", "partial", "failed"].includes(res.body.status)) return res.body;
    if (Date.now() > deadline) throw new Error(`analysis did not finish in time: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("links of a collection job created with an ingest key", () => {
  it("the same key follows the poll, the analysis and its event stream", async () => {
    const entity = await newEntity(h, token, { name: "Linkco" });
    const created = await h.http
      .post("/agent/v1/ingest/collection/jobs")
      .set(withKey(ingestKey))
      .send({ entity_id: entity.id, objective: "Why do teams choose Linkco?", platforms: ["hackernews"], idempotency_key: "links-0001" });
    expect(created.status, JSON.stringify(created.body)).toBe(200);

    const { url, job } = await followToAnalysis(created.body.next, ingestKey);
    expect(job.status).toBe("completed");
    expect(url).toBe(`/agent/v1/analysis/${job.analysis_id}`);

    const analysis = await finishedAnalysis(url, ingestKey);
    expect(analysis.analysis_id).toBe(job.analysis_id);
    expect(analysis.events_url).toBe(`/agent/v1/analysis/${job.analysis_id}/events`);

    const events = await h.http.get(analysis.events_url).set(withKey(ingestKey));
    expect(events.status).toBe(200);
    expect(events.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(events.text).toMatch(/event: (result|error)/);

    // The key's usage records each read under the ingest scope (written once each response has ended).
    const usage = await until(async () => {
      const rows = await h.deps.db.apiKeyUsage.findMany({ where: { route: { startsWith: "/agent/v1/analysis/" } } });
      return rows.some((u) => u.route.endsWith("/events")) ? rows : undefined;
    });
    expect(usage.map((u) => [u.route, u.statusCode, u.scopeUsed])).toEqual(
      expect.arrayContaining([
        ["/agent/v1/analysis/:analysis_id", 200, "ingest"],
        ["/agent/v1/analysis/:analysis_id/events", 200, "ingest"],
      ]),
    );

    // Another account's ingest key does not see the analysis at all.
    const strangerKey = (await createKeyFor(h, await h.token(), ["ingest"])).raw_key;
    expect((await h.http.get(url).set(withKey(strangerKey))).status).toBe(404);
  });

  it("an ingest key may not read the account's other analyses (403); a bearer and a * key may", async () => {
    const entity = await newEntity(h, token, { name: "Otherco" });
    const { workspaceId } = await h.deps.db.entity.findUniqueOrThrow({ where: { id: entity.id }, select: { workspaceId: true } });
    const owner = await h.deps.db.workspaceMember.findFirstOrThrow({ where: { workspaceId } });
    // An analysis of the account that no collection job started (as POST /agent/v1/analysis/run makes them),
    // and one whose request_id names a collection job it does not belong to.
    const direct = await h.deps.db.analysis.create({
      data: { userId: owner.userId, entityId: entity.id, question: "What do people say?", depth: "brief", status: "queued" },
    });
    const claimed = await h.deps.db.analysis.create({
      data: {
        userId: owner.userId,
        entityId: entity.id,
        requestId: "collection-job:00000000-0000-4000-8000-000000000000",
        question: "What do people say?",
        depth: "brief",
        status: "queued",
      },
    });
    for (const id of [direct.id, claimed.id]) {
      for (const path of [`/agent/v1/analysis/${id}`, `/agent/v1/analysis/${id}/events`]) {
        const refused = await h.http.get(path).set(withKey(ingestKey));
        expect(refused.status, path).toBe(403);
        expect(refused.body.code).toBe("insufficient_scope");
      }
    }
    const fullKey = (await createKeyFor(h, token, ["*"])).raw_key;
    expect((await h.http.get(`/agent/v1/analysis/${direct.id}`).set(withKey(fullKey))).status).toBe(200);
    expect((await h.http.get(`/agent/v1/analysis/${direct.id}`).set("Authorization", `Bearer ${token}`)).status).toBe(200);
    const exportKey = (await createKeyFor(h, token, ["export"])).raw_key;
    expect((await h.http.get(`/agent/v1/analysis/${direct.id}`).set(withKey(exportKey))).status).toBe(403);
  });
});
