import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analysisProcessor } from "../../workers/analysis.js";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { createTenant, storeSources, type Tenant, waitFor } from "./fixtures.js";
import { listen, runAnalysis } from "./sse-client.js";

/**
 * Focused questions over a corpus of issues and reviews: each question is answered from statements of
 * the kind it asks for, two different questions cite different sources, a question nothing answers is
 * told so, and counts are over every stored source in scope, beyond the analysed sample.
 */
interface Result {
  answer: string;
  insights: {
    title: string;
    aspect: string | null;
    polarity: string;
    sources: number;
    sources_analysed?: number;
    evidence: { content_id: string }[];
  }[];
  evidence: { content_id: string; feedback_kind: string | null }[];
  limitations: string[];
}

let h: Harness;
let base: string;
let closeServer: () => Promise<void>;
let tenant: Tenant;
let kindOf: Map<string, string>;

const BUGS = [
  "### Describe the bug\nSync keeps failing on Android after the 2.3 update.\n\n### To Reproduce\n1. Open the app\n2. Tap sync\n\n```\nError: ETIMEDOUT\n```",
  "### Describe the bug\nThe app crashes when I attach a photo to a note.\n\n### Environment\n- OS: Android 14\n- App version: 2.3.0",
  "Search returns nothing for notes older than a year. It is broken since the last release.",
];
const REQUESTS = [
  "**Is your feature request related to a problem?**\nI forget weekly tasks.\n\n**Describe the solution you'd like**\nPlease add recurring reminders.",
  "It would be great to have recurring reminders for weekly reviews.",
  "Could you add PDF export? I need to share notes with clients.",
];
const PRAISE = ["I love the editor, it is fast and clean.", "Switched to this from Evernote and the editor is much better than Evernote."];

beforeAll(async () => {
  h = await createHarness();
  ({ baseUrl: base, close: closeServer } = await listen(h));
  tenant = await createTenant(h, "Acme Notes");
  h.startWorkers({ "analysis.run.v1": analysisProcessor, "enrichment.content.v1": enrichmentProcessor });
  const sources = [
    ...BUGS.map((content, i) => ({ platform: "github", title: `Bug ${i}`, content, kind: "bug" })),
    ...REQUESTS.map((content, i) => ({ platform: "github", title: `Request ${i}`, content, kind: "request" })),
    ...PRAISE.map((content) => ({ platform: "reddit", content, kind: "praise" })),
    // Many more complaints about sync than a brief analysis reads.
    ...Array.from({ length: 70 }, (_, i) => ({
      platform: "reddit",
      content: `Sync is broken again, day ${i + 1}. Terrible sync.`,
      kind: "sync",
    })),
  ];
  const ids = await storeSources(
    h,
    tenant,
    sources.map(({ kind: _kind, ...s }) => s),
  );
  kindOf = new Map(ids.map((id, i) => [id, sources[i]!.kind]));
  await waitFor(
    async () =>
      (await h.deps.db.content.count({ where: { id: { in: ids }, enrichment: { enrichedAt: { not: null } } } })) === ids.length
        ? true
        : undefined,
    30_000,
  );
});
afterAll(async () => {
  await closeServer();
  await h.close();
});

const analyse = (question: string, depth = "brief") => runAnalysis<Result>(base, tenant, question, depth);

const citedKinds = (r: Result) => [...new Set(r.evidence.map((e) => kindOf.get(e.content_id)))];

describe("focused questions", () => {
  it("answers a question about requests from requests, named after what they ask for", async () => {
    const { data } = await analyse("Which features do users request most?", "deep");
    expect(citedKinds(data)).toEqual(["request"]);
    expect(data.answer).toMatch(/^Most requested: recurring reminders \(2 sources\)/);
    expect(data.insights.every((i) => i.polarity === "request")).toBe(true);
  });

  it("answers a question about bugs from bug reports, citing other sources than the requests", async () => {
    const bugs = await analyse("What bugs do users report most?", "deep");
    const requests = await analyse("Which features do users request most?", "deep");
    expect(bugs.data.answer).toMatch(/^Most reported bugs: /);
    expect(bugs.data.evidence.every((e) => kindOf.get(e.content_id) !== "request")).toBe(true);
    const a = new Set(bugs.data.evidence.map((e) => e.content_id));
    expect(requests.data.evidence.filter((e) => a.has(e.content_id))).toEqual([]);
  });

  it("says plainly when nothing answers the question", async () => {
    const { status, data } = await analyse("Why do users give up or switch to another app?", "deep");
    // The one switch here is to this product, not away from it.
    expect(status).toBe("partial");
    expect(data.answer).toMatch(/^None of the \d+ analysed sources holds reasons to leave or switch/);
    expect(data.insights).toEqual([]);
  });

  it("counts a theme's sources over everything stored in scope, not only the analysed sample", async () => {
    const { data } = await analyse("What are the biggest complaints?", "brief");
    const sync = data.insights.find((i) => i.aspect === "sync" && i.polarity === "complaint");
    expect(sync).toBeDefined();
    expect(sync!.sources).toBeGreaterThanOrEqual(71);
    expect(sync!.sources_analysed).toBeLessThanOrEqual(50);
    expect(data.answer).toMatch(/Counts are distinct sources among the 78 stored sources in scope; quotes come from 50 analysed sources\./);
  });
});
