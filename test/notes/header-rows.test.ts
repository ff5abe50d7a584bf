import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyQuotes } from "../../src/insights/analysis/load.js";
import { processors } from "../../workers/processors.js";
import { listen, openStream } from "../analysis/sse-client.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { FakeNotesProvider, makeNote } from "./fake-provider.js";
import { userWithEntity } from "./helpers.js";

/**
 * A meeting note's own row (title, date, owner, attendees, calendar event) describes the
 * meeting; only what was said in it (the transcript utterances) is evidence. The question
 * below shares its words with the header rows ("Customer call 6", "Calendar event: ..."),
 * so an analysis that could read them would cite them.
 */
const API_KEY = `grn_${randomUUID().replaceAll("-", "")}`;
const QUESTION = "What happened on the customer call, and what did customers say about the export feature?";
let provider: FakeNotesProvider;
let h: Harness;
let server: Awaited<ReturnType<typeof listen>>;
let token: string;
let entityId: string;
let workspaceId: string;
let headerIds: string[];
let utteranceIds: string[];

interface EvidenceItem {
  content_id: string;
  quote: string;
}

beforeAll(async () => {
  provider = new FakeNotesProvider(API_KEY);
  const url = await provider.start();
  h = await createHarness({ MEETINGNOTES_API_URL: url });
  h.startWorkers(processors, 4);
  provider.notes.push(makeNote(4), makeNote(5), makeNote(6));
  server = await listen(h);
  ({ token, entityId, workspaceId } = await userWithEntity(h));
  const imported = await h.http
    .post("/api/meetingnotes/sync")
    .set("Authorization", `Bearer ${token}`)
    .send({ api_key: API_KEY, entity_id: entityId, max_notes: 20 });
  expect(imported.status, JSON.stringify(imported.body)).toBe(200);
  headerIds = imported.body.notes.map((n: { content_id: string }) => n.content_id);
  utteranceIds = imported.body.notes.flatMap((n: { utterance_content_ids: string[] }) => n.utterance_content_ids);
  expect(headerIds).toHaveLength(3);
  const header = await h.deps.db.content.findUniqueOrThrow({ where: { id: headerIds[0] as string } });
  expect(header.content).toMatch(/Calendar event: Customer call \d/);
});
afterAll(async () => {
  await server.close();
  await h.close();
  await provider.close();
});

async function analyse(body: Record<string, unknown>) {
  const stream = await openStream(`${server.baseUrl}/agent/v1/analysis/run`, {
    method: "POST",
    token,
    body: { question: QUESTION, entity_id: entityId, depth: "deep", ...body },
  });
  expect(stream.status).toBe(200);
  await stream.until((events) => events.some((e) => e.event === "result" || e.event === "error"), 30_000);
  const result = stream.events.find((e) => e.event === "result");
  expect(result, JSON.stringify(stream.events.at(-1))).toBeDefined();
  return result!.data.data as {
    evidence: EvidenceItem[];
    insights: { evidence: EvidenceItem[] }[];
    coverage: Record<string, { in_scope: number }>;
  };
}

describe("meeting-note header rows are never evidence", () => {
  it.each([["knowledge"], ["multi_source"], ["user_first"]])("search_mode %s cites transcript rows only", async (mode) => {
    const data = await analyse({ search_mode: mode });
    expect(data.evidence.length).toBeGreaterThan(0);
    const cited = [...data.evidence, ...data.insights.flatMap((i) => i.evidence)];
    for (const item of cited) {
      expect(headerIds, item.quote).not.toContain(item.content_id);
      expect(utteranceIds, item.quote).toContain(item.content_id);
      expect(item.quote).not.toMatch(/Calendar event|Attendees|Owner:/);
    }
    // Only the utterances count as rows in scope.
    expect(data.coverage.meetingnotes?.in_scope).toBe(utteranceIds.length);
  });

  it("provided_sources naming a header row still cites only the utterances", async () => {
    const data = await analyse({ provided_sources: [...headerIds, ...utteranceIds].map((content_id) => ({ content_id })) });
    for (const item of data.evidence) expect(headerIds).not.toContain(item.content_id);
  });

  it("the quote gate refuses a verbatim quote of a header row", async () => {
    const header = await h.deps.db.content.findUniqueOrThrow({ where: { id: headerIds[0] as string } });
    const quote = header.content.split("\n").find((line) => line.startsWith("Calendar event:")) as string;
    const { kept, dropped } = await verifyQuotes(h.deps.db, [{ content_id: header.id, quote }], { workspaceIds: [workspaceId] });
    expect(kept).toEqual([]);
    expect(dropped).toEqual([expect.objectContaining({ reason: "not_quotable" })]);
  });
});
