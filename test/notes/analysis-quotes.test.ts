import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processors } from "../../workers/processors.js";
import { listen, openStream } from "../analysis/sse-client.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { FakeNotesProvider, makeNote } from "./fake-provider.js";
import { userWithEntity } from "./helpers.js";

const API_KEY = `grn_${randomUUID().replaceAll("-", "")}`;
let provider: FakeNotesProvider;
let h: Harness;
let server: Awaited<ReturnType<typeof listen>>;

// Summaries that answer the question better than any utterance does: if summaries were
// quotable, the analysis would surely quote them.
const summary = (i: number) =>
  `SUMMARY ${i}: customers said the export feature keeps them on the product and the export feature pricing is the main concern.`;

beforeAll(async () => {
  provider = new FakeNotesProvider(API_KEY);
  const url = await provider.start();
  h = await createHarness({ MEETINGNOTES_API_URL: url });
  h.startWorkers(processors, 4);
  provider.notes.push(makeNote(1, { summary: summary(1) }), makeNote(2, { summary: summary(2) }), makeNote(3, { summary: summary(3) }));
  server = await listen(h);
});
afterAll(async () => {
  await server.close();
  await h.close();
  await provider.close();
});

describe("an analysis over imported meeting notes", () => {
  it("quotes transcript utterances verbatim and never a summary", async () => {
    const { token, entityId } = await userWithEntity(h);
    const imported = await h.http
      .post("/api/meetingnotes/sync")
      .set("Authorization", `Bearer ${token}`)
      .send({ api_key: API_KEY, entity_id: entityId, max_notes: 20 });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(await h.deps.db.knowledge.count({ where: { entityId } })).toBe(3);

    const stream = await openStream(`${server.baseUrl}/agent/v1/analysis/run`, {
      method: "POST",
      token,
      body: { question: "What do customers say about the export feature and its pricing?", entity_id: entityId, depth: "deep" },
    });
    expect(stream.status).toBe(200);
    await stream.until((events) => events.some((e) => e.event === "result" || e.event === "error"), 30_000);
    const result = stream.events.find((e) => e.event === "result");
    expect(result, JSON.stringify(stream.events.at(-1))).toBeDefined();
    const data = result!.data.data as { evidence: { content_id: string; quote: string }[] };
    expect(data.evidence.length).toBeGreaterThan(0);

    for (const item of data.evidence) {
      const row = await h.deps.db.content.findUniqueOrThrow({ where: { id: item.content_id } });
      expect(row.content.includes(item.quote), item.quote).toBe(true);
      expect(row.platform).toBe("meetingnotes");
      expect(item.quote).not.toContain("SUMMARY");
    }
    expect(JSON.stringify(result!.data)).not.toContain("SUMMARY ");
  });
});
