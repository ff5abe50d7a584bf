import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { ENCODER_MODEL } from "../../src/insights/embed/encoder.js";
import { HASHING_MODEL, hashingEmbedder, hashingVector } from "../../src/insights/embed/hashing.js";
import { reembedProgress, reembedStored, reembedTargets } from "../../src/insights/embed/reembed.js";
import { reembedStopKey } from "../../src/insights/embed/reembed-command.js";
import { STATIC_DIMENSIONS, STATIC_MODEL } from "../../src/insights/embed/static.js";
import { enrichContent } from "../../src/insights/enrichment/service.js";
import { reembedProcessor } from "../../workers/reembed.js";
import { createTenant, storeSources, type Tenant } from "../analysis/fixtures.js";
import { signIn, type TestUser } from "../context/helpers.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * Re-embedding of vectors stored by the former default (feature hashing), against real PostgreSQL: recall keeps
 * answering while rows of both models are stored, a stopped run loses nothing and a second run finishes the rest,
 * and the operator commands queue it in the background and report how far it is.
 */
let h: Harness;
let alice: TestUser;
let tenant: Tenant;
const paths = (res: { body: { results: { path: string }[] } }) => res.body.results.map((r) => r.path);

const PAGES = [
  { path: "billing/complaints", title: "Billing", content: "Customers say the subscription is far too expensive for small teams." },
  { path: "mobile/crashes", title: "Mobile", content: "The iOS app crashes when a photo is attached to a note." },
  { path: "onboarding/steps", title: "Onboarding", content: "New users get lost between the invite email and the first project." },
  { path: "exports/csv", title: "Exports", content: "CSV exports drop the last column when a field holds a comma." },
  { path: "search/speed", title: "Search", content: "Search results take several seconds on large workspaces." },
];

/** Stores every page's vector as feature hashing gave it, as a deployment before the trained models did. */
async function hashAllPages() {
  for (const p of PAGES) {
    const page = await h.deps.db.page.findFirstOrThrow({ where: { userId: alice.id, path: p.path } });
    await h.deps.db.$executeRaw`
      UPDATE pages SET embedding = ${hashingVector(`${page.title}\n\n${page.content}`)}::real[], embedding_model = ${HASHING_MODEL}
      WHERE id = ${page.id}::uuid`;
  }
}

beforeAll(async () => {
  h = await createHarness();
  alice = await signIn(h);
  for (const p of PAGES) expect((await alice.save(p)).status).toBe(200);
  await hashAllPages();
  tenant = await createTenant(h, "Reembed Co");
  const ids = await storeSources(h, tenant, [
    { platform: "reddit", title: "Too pricey", content: "The plan costs too much for what it does." },
    { platform: "reddit", title: "Crash", content: "It crashes every time I open the settings." },
    { platform: "hackernews", title: "Love it", content: "Great editor, fast and simple." },
  ]);
  await enrichContent(h.deps.pool, hashingEmbedder(), ids);
});
afterAll(() => h.close());

describe("re-embedding stored vectors of the hashing model", () => {
  it("recalls by keyword while pages carry the old model's vectors, and by meaning once re-embedded", async () => {
    // "pricing" is in no page; only the encoder's vector relates it to the billing page.
    const query = { query: "pricing is a problem" };
    const before = await alice.recall(query);
    expect(before.status).toBe(200);
    expect(paths(before)).not.toContain("billing/complaints");

    const targets = reembedTargets(h.config);
    const stopAfterFirst = { calls: 0 };
    const stopped = await reembedStored(h.deps, targets, { shouldStop: () => stopAfterFirst.calls++ > 0 }, { pages: 2, originals: 2 });
    expect(stopped).toEqual({ status: "stopped", pages: 2, originals: 0 });
    const midway = await reembedProgress(h.deps, targets);
    expect(midway.pages).toEqual({ model: ENCODER_MODEL, done: 2, left: 3 });
    expect(midway.originals).toEqual({ model: STATIC_MODEL, done: 0, left: 3 });
    // Mixed models stored: recall answers, comparing the query only with vectors of its own model.
    expect((await alice.recall(query)).status).toBe(200);

    const units = await h.deps.db.opinionUnit.count();
    const finished = await reembedStored(h.deps, targets, {}, { pages: 2, originals: 2 });
    expect(finished).toEqual({ status: "completed", pages: 3, originals: 3 });
    const after = await reembedProgress(h.deps, targets);
    expect(after.pages).toEqual({ model: ENCODER_MODEL, done: 5, left: 0 });
    expect(after.originals).toEqual({ model: STATIC_MODEL, done: 3, left: 0 });
    expect(await h.deps.db.opinionUnit.count()).toBe(units);
    const rows = await h.deps.db.contentEnrichment.findMany({ where: { entityId: tenant.entityId } });
    for (const row of rows) expect(row.embedding).toHaveLength(STATIC_DIMENSIONS);

    expect(paths(await alice.recall(query))[0]).toBe("billing/complaints");
    // Nothing is left, so another run does nothing.
    expect(await reembedStored(h.deps, targets)).toEqual({ status: "completed", pages: 0, originals: 0 });
  });

  it("never overwrites a page saved while its chunk was being embedded", async () => {
    await hashAllPages();
    const targets = reembedTargets(h.config);
    const slow = {
      ...targets,
      pages: {
        ...targets.pages,
        embed: async (texts: string[]) => {
          // A save lands between the read of the chunk and its write.
          await alice.save({ ...PAGES[0]!, content: "Rewritten: the annual plan has a discount now." });
          return targets.pages.embed(texts);
        },
      },
    };
    await reembedStored(h.deps, slow, {}, { pages: 10 });
    const page = await h.deps.db.page.findFirstOrThrow({ where: { userId: alice.id, path: PAGES[0]!.path } });
    expect(page.version).toBeGreaterThan(1);
    expect(page.embeddingModel).toBe(ENCODER_MODEL);
    // The save's own vector (of the new text) stands, not the one of the text read before it.
    const [fresh] = await targets.pages.embed([`${page.title}\n\n${page.content}`]);
    expect(page.embedding.reduce((s, v, i) => s + v * fresh![i]!, 0)).toBeGreaterThan(0.99);
  });

  it("runs in the background from the operator commands, with progress, and stops and resumes on request", async () => {
    await hashAllPages();
    const queued = await runAdminCommand(h.deps, ["reembed"]);
    expect(queued).toMatch(/^re-embedding queued; pages: \d+ pages? of minilm-l6-v2-int8-v1, 5 left \(local-hashing-v1: 5\)/);
    expect(await runAdminCommand(h.deps, ["reembed-status"])).toMatch(/^re-embedding (waiting|prioritized)/);
    // A stop before it starts takes it off the queue.
    expect(await runAdminCommand(h.deps, ["reembed-stop"])).toMatch(/taken off the queue/);
    expect(await runAdminCommand(h.deps, ["reembed-status"])).toMatch(/^re-embedding not queued; .*5 left/);

    await runAdminCommand(h.deps, ["reembed"]);
    h.startWorkers({ "embeddings.reembed.v1": reembedProcessor });
    const deadline = Date.now() + 30_000;
    let status = "";
    while (Date.now() < deadline) {
      status = await runAdminCommand(h.deps, ["reembed-status"]);
      if (/pages: 5 pages of minilm-l6-v2-int8-v1, 0 left/.test(status)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toMatch(/pages: 5 pages of minilm-l6-v2-int8-v1, 0 left; stored originals: 3 rows of minilm-l6-v2-static-v2, 0 left/);
    expect(await h.deps.redis.get(reembedStopKey(h.config))).toBeNull();
  });
});
