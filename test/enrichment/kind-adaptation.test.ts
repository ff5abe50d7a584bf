import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBulkEmbedder } from "../../src/insights/embed/provider.js";
import {
  adaptModel,
  adaptTrackerModel,
  canAdapt,
  type LabelledText,
  MIN_LABELLED,
  readTrackerKinds,
} from "../../src/insights/enrichment/feedback-kind/adapt.js";
import { classifySource, kindModel } from "../../src/insights/enrichment/feedback-kind/model.js";
import {
  adaptTrackerKinds,
  inlineKindThreads,
  KIND_ADAPT_DELAY_MS,
  queueTrackerKinds,
  redisTrackerMemory,
} from "../../src/insights/enrichment/kind-adaptation.js";
import { enrichContent } from "../../src/insights/enrichment/service.js";
import { jobIds } from "../../src/jobs/ids.js";
import { kindAdaptationProcessor } from "../../workers/enrichment.js";
import { createTenant, storedKinds, storeSources, type Tenant, waitFor } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * A tracker's own triage, learnt from its labelled issues: this tracker files usage problems that arrive as bug
 * reports (an error after an update, with the user's dotfiles to blame) under `question`. The shared model reads
 * such an issue as a bug report; adapted to the tracker's labelled issues it reads new ones as questions, and a
 * crash report still as a bug.
 */
const THINGS = [
  "neovim",
  "the plugin manager",
  "treesitter",
  "the lsp client",
  "telescope",
  "the colour scheme",
  "lualine",
  "the formatter",
];
const ACTIONS = ["saving a file", "opening a split", "resizing the window", "closing a buffer", "running a macro", "pasting text"];

const usageProblem = (i: number) => ({
  title: `Error after updating ${THINGS[i % THINGS.length]} (${i})`,
  content: `After updating ${THINGS[i % THINGS.length]} I get an error on start-up. My dotfiles set the option in the plugins section, copied from my old dotfiles. Error: module ${i} not found.`,
});
const crash = (i: number) => ({
  title: `Crash when ${ACTIONS[i % ACTIONS.length]} (${i})`,
  content: `The editor crashes when ${ACTIONS[i % ACTIONS.length]}. It happens every time since the last release.\n\n\`\`\`\nthread 'main' panicked at src/buffer_${i}.rs:12:5\n\`\`\``,
});
const wish = (i: number) => ({
  title: `Add support for ${["toml", "yaml", "json5", "ini", "kdl"][i % 5]} files (${i})`,
  content: `It would be great to have support for ${["toml", "yaml", "json5", "ini", "kdl"][i % 5]} files. Please add an option for it.`,
});

const labelled: LabelledText[] = [
  ...Array.from({ length: 15 }, (_, i) => ({ ...usageProblem(i), kind: "question" as const })),
  ...Array.from({ length: 15 }, (_, i) => ({ ...crash(i), kind: "bug_report" as const })),
  ...Array.from({ length: 10 }, (_, i) => ({ ...wish(i), kind: "feature_request" as const })),
];
const fresh = [usageProblem(101), usageProblem(102), crash(103), wish(104)];

describe("the feedback-kind model adapted to a tracker", () => {
  it("adapts only to enough labelled issues of two kinds or more", () => {
    expect(MIN_LABELLED).toBe(30);
    expect(canAdapt(labelled)).toBe(true);
    expect(canAdapt(labelled.slice(0, 29))).toBe(false);
    // Thirty, but one kind alone (and the second kind too rare to learn from).
    expect(canAdapt([...labelled.slice(0, 15), ...labelled.slice(0, 13), ...labelled.slice(15, 17)])).toBe(false);
    expect(adaptTrackerModel(labelled.slice(0, 20))).toBeNull();
  });

  it("reads the tracker's new issues its way: usage problems as questions, crashes and wishes as before", () => {
    expect(fresh.map((f) => classifySource(f.title, f.content).kind)).toEqual(["bug", "bug", "bug", "feature"]);
    const overlay = adaptTrackerModel(labelled);
    expect(overlay).not.toBeNull();
    const readings = readTrackerKinds(overlay!, fresh);
    expect(readings.map((r) => r.class)).toEqual(["question", "question", "bug", "feature"]);
    for (const r of readings) expect(r.confidence).toBeGreaterThan(0.5);
  });

  it("leaves the shared model as it was, and adapts the same way every time", () => {
    const before = JSON.stringify(kindModel());
    const a = adaptModel(kindModel(), labelled);
    const b = adaptModel(kindModel(), labelled);
    expect(JSON.stringify(kindModel())).toBe(before);
    expect(a.bias).toEqual(b.bias);
    expect(a.weights["b:dotfiles"]).toEqual(b.weights["b:dotfiles"]);
    expect(a.weights["b:dotfiles"]).not.toEqual(kindModel().weights["b:dotfiles"]);
  });
});

describe("enrichment.kinds.v1", () => {
  let h: Harness;
  let tenant: Tenant;
  const TRACKER = { repository: "acme/editor" };

  beforeAll(async () => {
    h = await createHarness();
    tenant = await createTenant(h);
  });
  afterAll(() => h.close());

  const stored = (ids: string[]) => storedKinds(h, ids);

  it("reads a tracker's unlabelled issues by its labelled ones, and nothing of other trackers or platforms", async () => {
    const labelledIds = await storeSources(
      h,
      tenant,
      labelled.map(({ kind, ...text }) => ({
        platform: "github",
        ...text,
        metadata: {
          ...TRACKER,
          labels: [{ name: { question: "question", bug_report: "type: bug", feature_request: "enhancement" }[kind] }],
        },
      })),
    );
    const freshIds = await storeSources(
      h,
      tenant,
      fresh.map((text) => ({ platform: "github", ...text, metadata: { ...TRACKER, labels: [{ name: "needs triage" }] } })),
    );
    // The same texts in another repository (no labels), on another platform, and as a pull request of the tracker.
    const otherIds = await storeSources(h, tenant, [
      { platform: "github", ...fresh[0]!, content: `${fresh[0]!.content} `, metadata: { repository: "acme/other" } },
      { platform: "reddit", ...fresh[1]!, content: `${fresh[1]!.content} ` },
      { platform: "github", ...fresh[1]!, content: `${fresh[1]!.content}  `, metadata: { ...TRACKER, pull_request: true, labels: [] } },
    ]);
    const embedder = createBulkEmbedder(h.deps.config);
    await enrichContent(h.deps.pool, embedder, [...labelledIds, ...freshIds, ...otherIds]);
    const sharedFresh = await stored(freshIds);
    const sharedOther = await stored(otherIds);
    expect(sharedFresh.map((k) => k[0])).toEqual(["bug_report", "bug_report", "bug_report", "feature_request"]);

    h.startWorkers({ "enrichment.kinds.v1": kindAdaptationProcessor });
    await h.deps.queues.enqueue("enrichment.kinds.v1", { entityId: tenant.entityId, platform: "github", repository: "acme/editor" });
    const adapted = await waitFor(async () => {
      const now = await stored(freshIds);
      return now[0]![0] === "question" ? now : undefined;
    }, 20_000);
    expect(adapted.map((k) => k[0])).toEqual(["question", "question", "bug_report", "feature_request"]);
    for (const [, confidence] of adapted) expect(confidence).toBeGreaterThan(0.5);
    // The labelled issues keep their labels' kinds; the other repository, platform and the pull request keep the shared model's.
    expect((await stored(labelledIds)).every(([, c]) => c === 1)).toBe(true);
    expect(await stored(otherIds)).toEqual(sharedOther);

    // Run again: nothing left to change, whatever the page size.
    const tracker = { entityId: tenant.entityId, platform: "github", repository: "acme/editor" };
    expect(await adaptTrackerKinds(h.deps.pool, tracker)).toEqual({ labelled: 40, adapted: true, read: 4, changed: 0, whole: true });
    expect(await adaptTrackerKinds(h.deps.pool, tracker, undefined, { maxRows: 1000, pageRows: 3 })).toEqual({
      labelled: 40,
      adapted: true,
      read: 4,
      changed: 0,
      whole: true,
    });
    // Only the newest sources are read again: here the fresh issues, stored after the labelled ones, the first oldest.
    for (const [i, id] of freshIds.entries()) {
      await h.deps.db.$executeRaw`UPDATE content_store SET created_at = now() + ${i} * interval '1 second' WHERE id = ${id}::uuid`;
      await h.deps.db.$executeRaw`UPDATE content_enrichment SET feedback_kind = 'bug_report' WHERE content_id = ${id}::uuid`;
    }
    expect(await adaptTrackerKinds(h.deps.pool, tracker, undefined, { maxRows: 3, pageRows: 2 })).toEqual({
      labelled: 40,
      adapted: true,
      read: 3,
      changed: 2,
      whole: true,
    });
    expect((await stored(freshIds)).map((k) => k[0])).toEqual(["bug_report", "question", "bug_report", "feature_request"]);
  });

  it("changes nothing for a tracker with too few labelled issues", async () => {
    const ids = await storeSources(h, tenant, [
      ...labelled
        .slice(0, 10)
        .map(({ kind: _k, ...text }) => ({ platform: "github", ...text, metadata: { repository: "acme/small", labels: ["question"] } })),
      { platform: "github", ...fresh[0]!, metadata: { repository: "acme/small" } },
    ]);
    await enrichContent(h.deps.pool, createBulkEmbedder(h.deps.config), ids);
    const before = await stored(ids);
    const result = await adaptTrackerKinds(h.deps.pool, { entityId: tenant.entityId, platform: "github", repository: "acme/small" });
    expect(result).toEqual({ labelled: 0, adapted: false, read: 0, changed: 0, whole: false });
    expect(await stored(ids)).toEqual(before);
  });

  it("with a memory, reads again only the rows enriched since its last run while the labelled ones stay the same", async () => {
    const tracker = { entityId: tenant.entityId, platform: "github", repository: "acme/remembered" };
    const memory = redisTrackerMemory(h.deps.redis, `kinds-test-${randomUUID()}`);
    const store = async (texts: { title: string; content: string; labels?: string[] }[]) => {
      const ids = await storeSources(
        h,
        tenant,
        texts.map(({ labels, ...text }) => ({
          platform: "github",
          ...text,
          metadata: { repository: tracker.repository, labels: labels ?? [] },
        })),
      );
      await enrichContent(h.deps.pool, createBulkEmbedder(h.deps.config), ids);
      await queueTrackerKinds({ ...h.deps, memory }, ids);
      return ids;
    };
    const LABEL = { question: "question", bug_report: "bug", feature_request: "enhancement" };
    await store(labelled.map(({ kind, title, content }) => ({ title, content: `${content} (remembered)`, labels: [LABEL[kind]] })));
    const first = await store([usageProblem(201)]);
    // No fingerprint yet: the tracker's newest sources are read.
    expect(await adaptTrackerKinds(h.deps.pool, tracker, undefined, undefined, memory)).toMatchObject({ whole: true, read: 1 });
    expect((await stored(first))[0]![0]).toBe("question");
    // Nothing enriched since: nothing read.
    expect(await adaptTrackerKinds(h.deps.pool, tracker, undefined, undefined, memory)).toMatchObject({ whole: false, read: 0 });
    // New rows: only they are read.
    const later = await store([usageProblem(202), crash(203)]);
    expect(await adaptTrackerKinds(h.deps.pool, tracker, undefined, undefined, memory)).toMatchObject({
      whole: false,
      read: 2,
    });
    expect((await stored(later)).map((k) => k[0])).toEqual(["question", "bug_report"]);
    // A new labelled source changes what is learnt: the tracker is read whole again.
    await store([{ ...crash(204), labels: ["bug"] }]);
    expect(await adaptTrackerKinds(h.deps.pool, tracker, undefined, undefined, memory)).toMatchObject({
      whole: true,
      labelled: 41,
      read: 3,
    });
    // A run that fails gives its rows back for the retry.
    const failed = await store([usageProblem(205)]);
    const failing = {
      ...inlineKindThreads,
      read: async () => {
        throw new Error("analysis thread lost");
      },
    };
    await expect(adaptTrackerKinds(h.deps.pool, tracker, failing, undefined, memory)).rejects.toThrow("analysis thread lost");
    expect(await memory.takePending(tracker, 100)).toEqual(failed);
  });

  it("is queued once per tracker and window for the enriched rows that name a repository or carry labels", async () => {
    const ids = await storeSources(h, tenant, [
      { platform: "github", title: "One", content: "The sync is slow.", metadata: { repository: "acme/queued" } },
      { platform: "github", title: "Two", content: "The sync is very slow.", metadata: { repository: "acme/queued", labels: ["bug"] } },
      { platform: "github", title: "Three", content: "Labels but no repository.", metadata: { labels: ["bug"] } },
      { platform: "reddit", content: "A post names neither." },
    ]);
    await enrichContent(h.deps.pool, createBulkEmbedder(h.deps.config), ids);
    const now = Date.UTC(2026, 10, 27, 12, 0, 10);
    const memory = redisTrackerMemory(h.deps.redis, `kinds-test-${randomUUID()}`);
    expect(await queueTrackerKinds({ ...h.deps, memory }, ids, now)).toBe(2);
    expect(await queueTrackerKinds({ ...h.deps, memory }, ids, now + 20_000)).toBe(2);
    const window = Math.floor(now / 60_000);
    const queue = h.deps.queues.get("enrichment");
    const trackers = [
      { entityId: tenant.entityId, platform: "github", repository: "acme/queued" },
      { entityId: tenant.entityId, platform: "github", repository: null },
    ];
    for (const tracker of trackers) {
      const job = await queue.getJob(jobIds.kindAdaptation(tracker, window));
      expect(job?.name).toBe("enrichment.kinds.v1");
      expect(job?.data).toEqual(tracker);
      expect(job?.opts.delay).toBe(KIND_ADAPT_DELAY_MS);
    }
    const queued = (await queue.getJobs(["delayed"])).filter(
      (j) => j.name === "enrichment.kinds.v1" && j.data.entityId === tenant.entityId && j.data.repository !== "acme/remembered",
    );
    expect(queued).toHaveLength(2);
    // Each tracker's rows wait in its memory for the run.
    expect((await memory.takePending(trackers[0]!, 100)).sort()).toEqual(ids.slice(0, 2).sort());
    expect(await memory.takePending(trackers[1]!, 100)).toEqual([ids[2]]);
    expect(await memory.takePending(trackers[0]!, 100)).toEqual([]);
  });
});
