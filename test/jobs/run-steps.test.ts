import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processors } from "../../workers/processors.js";
import { type Fake, hackernewsFake, hnStories } from "../collection/fakes.js";
import { until } from "../collection/support.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { expectLedgerConsistent, onboardCompany } from "../runs/helpers.js";
import { gate } from "./support.js";

/**
 * A workflow run holds no worker slot while its child job runs: with ONE worker slot per queue,
 * a second run starts its own collection while the first run's collection is still held upstream.
 * (A run that waited in its job for its child would keep the only slot until the child ended.)
 */
let h: Harness;
let hn: Fake;
const upstream = gate();

beforeAll(async () => {
  hn = await hackernewsFake(() => hnStories(3, "acme"));
  hn.intercept(async () => {
    await upstream.wait();
    return undefined;
  });
  h = await createHarness({ HACKERNEWS_API_URL: `${hn.url}/api/v1`, COLLECTOR_MAX_PAGES: "1", COLLECTOR_REQUESTS_PER_SECOND: "1000" });
  h.startWorkers(processors, 1);
});
afterAll(async () => {
  upstream.open();
  await h?.close();
  await hn?.close();
});

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

async function startRun(ctx: Awaited<ReturnType<typeof onboardCompany>>) {
  const skillId = ctx.skills[0]!.id;
  const quote = await h.http.get(`/api/entities/${ctx.entityId}/skills/${skillId}/quote?source_mode=refresh`).set(auth(ctx.token));
  const run = await h.http
    .post(`/api/entities/${ctx.entityId}/skills/${skillId}/runs`)
    .set(auth(ctx.token))
    .set("Idempotency-Key", randomId("steps-"))
    .send({ scope_hash: quote.body.scope_hash, max_charge_credits: quote.body.max_charge_credits });
  expect(run.status).toBe(202);
  return run.body as { id: string; links: { self: string } };
}

describe("workflow runs wait on their children without a worker slot", { timeout: 60_000 }, () => {
  it("a second run starts its collection while the first run's collection is held, and both complete", async () => {
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 1000 });
    const first = await startRun(ctx);
    // The first run's collection is running and held upstream.
    await until(async () => upstream.state.waiting > 0, 15_000);
    const second = await startRun(ctx);
    const secondChild = await until(async () => {
      const row = await h.deps.db.workflowRun.findUniqueOrThrow({ where: { id: second.id } });
      return row.collectionJobId ?? undefined;
    }, 15_000);
    const firstRow = await h.deps.db.workflowRun.findUniqueOrThrow({ where: { id: first.id } });
    expect(firstRow.status).toBe("running");
    const firstChild = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: firstRow.collectionJobId as string } });
    expect(firstChild.status).toBe("running");
    expect(secondChild).not.toBe(firstChild.id);
    // Nothing holds the workflow-run queue's only slot once the second run's step has handed over to
    // its child (the step records the child's id a moment before it returns).
    const queue = h.deps.queues.get("workflow-run");
    await until(async () => ((await queue.getActiveCount()) === 0 ? true : undefined), 5_000);
    expect(await queue.getActiveCount()).toBe(0);
    expect((await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: firstChild.id } })).status).toBe("running");

    upstream.open();
    for (const run of [first, second]) {
      const done = await until(async () => {
        const res = await h.http.get(run.links.self).set(auth(ctx.token));
        return ["completed", "failed", "blocked"].includes(res.body.status) ? res.body : undefined;
      }, 40_000);
      expect(done.status, JSON.stringify(done)).toBe("completed");
    }
    await expectLedgerConsistent(h, ctx.workspaceId);
  });
});
