import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageEmbeddingText } from "../../src/insights/context/embedding.js";
import { cosine, hashingVector } from "../../src/insights/embed/hashing.js";
import { deriveJobId } from "../../src/platform/queues.js";
import { contextEmbedProcessor } from "../../workers/context-embed.js";
import { type EmbeddingsServer, startEmbeddingsServer } from "../helpers/embeddings-server.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { signIn, type TestUser } from "./helpers.js";

/**
 * An OpenAI-format embeddings server (vectors from the local hashing function, so
 * similarity is meaningful) that can be switched to failing with 503.
 */
let failing = true;
let provider: EmbeddingsServer;
let h: Harness;
let user: TestUser;

beforeAll(async () => {
  provider = await startEmbeddingsServer(() => (failing ? "fail" : undefined));
  h = await createHarness({ EMBEDDINGS_URL: provider.url, EMBEDDINGS_MODEL: "fake-embedding-model" });
  user = await signIn(h);
});
afterAll(async () => {
  await h.close();
  await provider.close();
});

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, deadlineMs = 15_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > end) throw new Error("condition not met before the deadline");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("saving while the embeddings provider fails", () => {
  const page = { title: "Quay notes", content: "Wharfinger manifests: the wharfinger manifest.", path: "quay/notes" };

  it("stores the page without a vector, queues its embedding job, and recall finds it by keyword meanwhile", async () => {
    const saved = await user.save(page);
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ created: true, version: 1, embedding: "pending" });
    const row = await h.deps.db.page.findUniqueOrThrow({ where: { id: saved.body.id } });
    expect(row.embedding).toEqual([]);
    expect(row.embeddingModel).toBeNull();
    const job = await h.deps.queues.get("enrichment").getJob(deriveJobId("page-embed", saved.body.id, "1"));
    expect(job?.name).toBe("context.embed.v1");
    expect(job?.data).toEqual({ pageId: saved.body.id });

    const recall = await user.recall({ query: "wharfinger" });
    expect(recall.status).toBe(200);
    expect(recall.body.results.map((r: { path: string }) => r.path)).toEqual(["quay/notes"]);
  });

  it("answers 503 rather than an empty success when the provider fails and no keyword matches", async () => {
    const res = await user.recall({ query: "wharfingermanifests" });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("upstream_unavailable");
  });

  it("gets its vector from the worker once the provider recovers, and is then recalled by vector alone", async () => {
    failing = false;
    h.startWorkers({ "context.embed.v1": contextEmbedProcessor });
    const row = await until(
      () => h.deps.db.page.findFirstOrThrow({ where: { userId: user.id, path: page.path } }),
      (r) => r.embedding.length > 0,
    );
    expect(row.embeddingModel).toBe("fake-embedding-model");
    expect(row.embedding).toHaveLength(384);
    expect(row.version).toBe(1);

    // "wharfingermanifests" shares no full word with the page, only word pieces.
    expect(cosine(hashingVector("wharfingermanifests"), hashingVector(pageEmbeddingText(page.title, page.content)))).toBeGreaterThan(0.3);
    const res = await user.recall({ query: "wharfingermanifests" });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { path: string }) => r.path)).toEqual(["quay/notes"]);
  });

  it("embeds at save time while the provider works", async () => {
    const saved = await user.save({ ...page, path: "quay/second" });
    expect(saved.body.embedding).toBe("ready");
    const row = await h.deps.db.page.findUniqueOrThrow({ where: { id: saved.body.id } });
    expect(row.embeddingModel).toBe("fake-embedding-model");
  });
});
