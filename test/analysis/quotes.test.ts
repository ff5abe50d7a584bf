import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { verifyQuotes } from "../../src/analysis/evidence.js";
import { sliceCodePoints } from "../../src/enrichment/opinions.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { CORPUS, SUMMARY_TEXT } from "./corpus.js";
import { createTenant, storeSources, type Tenant, waitFor } from "./fixtures.js";
import { listen, openStream } from "./sse-client.js";

/**
 * Every quote is a verbatim substring of a stored original, and knowledge is never
 * quoted: checked on the one verification function directly, then through the endpoint
 * with a chat model (a local server answering in the OpenAI chat-completions format)
 * that fabricates quotes and citations.
 */
type Mode = "fabricate" | "not-json" | "http500";
let mode: Mode = "fabricate";
const llmRequests: { headers: IncomingMessage["headers"]; body: Record<string, unknown> }[] = [];
let llm: Server;
let h: Harness;
let base: string;
let closeServer: () => Promise<void>;
let tenant: Tenant;
let other: Tenant;
let ids: string[];
let emojiRow: string;
let foreignRow: string;
let knowledgeId: string;

const FABRICATED = "Acme pricing is criminal and a total scam";

function excerptsOf(prompt: string): { n: number; contentId: string; text: string }[] {
  return [...prompt.matchAll(/\[(\d+)\] content_id=(\S+) platform=\S+\n([^\n]*)/g)].map((m) => ({
    n: Number(m[1]),
    contentId: m[2]!,
    text: m[3]!,
  }));
}

function chatAnswer(body: Record<string, unknown>) {
  const messages = body.messages as { role: string; content: string }[];
  const excerpts = excerptsOf(messages.find((m) => m.role === "user")!.content);
  const [a, b] = excerpts;
  const content = {
    answer: `Pricing is the main complaint [${a!.n}][${b!.n}], and one user called it a scam [99].`,
    insights: [
      {
        title: "Pricing hurts small teams",
        summary: "Users find the price too high.",
        sentiment: "negative",
        confidence: 0.8,
        evidence: [
          { content_id: a!.contentId, quote: a!.text },
          { content_id: a!.contentId, quote: FABRICATED },
          { content_id: knowledgeId, quote: SUMMARY_TEXT },
        ],
      },
      {
        title: "Invented theme",
        summary: "Nothing supports this.",
        sentiment: "positive",
        confidence: 0.9,
        evidence: [{ content_id: b!.contentId, quote: "a sentence that appears nowhere at all" }],
      },
    ],
  };
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model: body.model,
    choices: [
      { index: 0, message: { role: "assistant", content: `\`\`\`json\n${JSON.stringify(content)}\n\`\`\`` }, finish_reason: "stop" },
    ],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

beforeAll(async () => {
  llm = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => {
      raw += c;
    });
    req.on("end", () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      llmRequests.push({ headers: req.headers, body });
      if (req.url !== "/v1/chat/completions") return void res.writeHead(404).end();
      if (mode === "http500") return void res.writeHead(500).end("{}");
      const answer =
        mode === "not-json"
          ? { choices: [{ index: 0, message: { role: "assistant", content: "I think pricing is bad." } }] }
          : chatAnswer(body);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => llm.listen(0, "127.0.0.1", resolve));
  h = await createHarness({
    LLM_BASE_URL: `http://127.0.0.1:${(llm.address() as AddressInfo).port}/v1`,
    LLM_API_KEY: "llm-test-key",
    LLM_MODEL: "test-model",
  });
  ({ baseUrl: base, close: closeServer } = await listen(h));
  tenant = await createTenant(h);
  other = await createTenant(h, "Globex");
  h.startWorkers({ "analysis.run.v1": analysisProcessor, "enrichment.content.v1": enrichmentProcessor });
  ids = await storeSources(h, tenant, CORPUS);
  emojiRow = (
    await storeSources(h, tenant, [{ platform: "twitter", content: "🚀🚀 Launch day! The new pricing page 🎉 looks clean." }])
  )[0]!;
  foreignRow = (await storeSources(h, other, [{ platform: "reddit", content: "Globex pricing is private to Globex." }]))[0]!;
  knowledgeId = (
    await h.deps.db.knowledge.create({
      data: {
        entityId: tenant.entityId,
        workspaceId: tenant.workspaceId,
        kind: "summary",
        platform: "meetingnotes",
        externalId: "not_2",
        content: SUMMARY_TEXT,
      },
    })
  ).id;
  await waitFor(async () =>
    (await h.deps.db.content.count({ where: { id: { in: ids }, enrichedAt: { not: null } } })) === ids.length ? true : undefined,
  );
});
afterAll(async () => {
  await closeServer();
  await h.close();
  await new Promise((resolve) => llm.close(resolve));
});
beforeEach(() => {
  mode = "fabricate";
  llmRequests.length = 0;
});

describe("verifyQuotes", () => {
  it("keeps verbatim quotes with code-point offsets and drops everything else, saying why", async () => {
    const row = await h.deps.db.content.findUniqueOrThrow({ where: { id: emojiRow } });
    const reddit = await h.deps.db.content.findUniqueOrThrow({ where: { id: ids[0]! } });
    const { kept, dropped } = await verifyQuotes(
      h.deps.db,
      [
        { content_id: emojiRow, quote: "The new pricing page 🎉 looks clean." },
        { content_id: ids[0]!, quote: "The onboarding flow was smooth though.", start_offset: 0, end_offset: 5 },
        { content_id: ids[0]!, quote: FABRICATED },
        { content_id: ids[0]!, quote: "the pricing is way too expensive" },
        { content_id: ids[0]!, quote: "The  onboarding flow was smooth though." },
        { content_id: knowledgeId, quote: SUMMARY_TEXT },
        { content_id: foreignRow, quote: "Globex pricing is private to Globex." },
        { content_id: ids[0]!, quote: "I " },
        { content_id: "not-a-uuid", quote: "anything at all here" },
      ],
      { workspaceIds: [tenant.workspaceId] },
    );
    expect(kept.map((k) => k.quote)).toEqual(["The new pricing page 🎉 looks clean.", "The onboarding flow was smooth though."]);
    const [emoji, claimedWrong] = kept;
    // Offsets count code points: two rockets before the quote are two characters, not four.
    expect(emoji!.start_offset).toBe(Array.from(row.content).indexOf("T", 14));
    expect(sliceCodePoints(row.content, emoji!.start_offset, emoji!.end_offset)).toBe(emoji!.quote);
    // Claimed offsets that do not hold are recomputed, never trusted.
    expect(sliceCodePoints(reddit.content, claimedWrong!.start_offset, claimedWrong!.end_offset)).toBe(claimedWrong!.quote);
    expect(claimedWrong).toMatchObject({
      platform: "reddit",
      url: reddit.url,
      author: reddit.author,
      published_at: reddit.publishedAt!.toISOString(),
    });
    expect(dropped.map((d) => d.reason)).toEqual([
      "not_verbatim",
      "not_verbatim",
      "not_verbatim",
      "not_stored_original",
      "out_of_scope",
      "empty",
      "not_stored_original",
    ]);
  });
});

describe("analysis with a chat model", () => {
  it("uses the model's prose but drops every quote and citation that is not verbatim in a stored original", async () => {
    const stream = await openStream(`${base}/agent/v1/analysis/run`, {
      method: "POST",
      token: tenant.token,
      body: { question: "What do users think about Acme pricing?", entity_id: tenant.entityId },
    });
    await stream.closed;
    const result = stream.events.at(-1)!;
    expect(result.event).toBe("result");
    const data = result.data.data as {
      answer: string;
      engine: string;
      insights: { title: string; evidence: { content_id: string; quote: string }[] }[];
      evidence: { number: number; content_id: string; quote: string; start_offset: number; end_offset: number }[];
      limitations: string[];
    };

    expect(llmRequests).toHaveLength(1);
    expect(llmRequests[0]!.headers.authorization).toBe("Bearer llm-test-key");
    expect(llmRequests[0]!.body).toMatchObject({ model: "test-model", temperature: 0 });
    expect(stream.events.some((e) => e.event === "progress" && e.data.step === "synthesis")).toBe(true);

    expect(data.engine).toBe("llm");
    expect(data.insights.map((i) => i.title)).toEqual(["Pricing hurts small teams"]);
    expect(data.insights[0]!.evidence).toHaveLength(1);
    const text = JSON.stringify(result.data);
    expect(text).not.toContain(FABRICATED);
    expect(text).not.toContain("appears nowhere");
    expect(text).not.toContain(SUMMARY_TEXT);
    expect(text).not.toContain(knowledgeId);
    // [99] pointed at nothing and is gone; the two real citations are renumbered evidence.
    expect(data.answer).not.toContain("[99]");
    const cited = [...data.answer.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
    expect(cited).toHaveLength(2);
    for (const n of cited) expect(data.evidence.find((e) => e.number === n)).toBeDefined();
    expect(data.limitations.join(" ")).toMatch(/dropped: not verbatim/);

    const rows = await h.deps.db.content.findMany({ where: { id: { in: data.evidence.map((e) => e.content_id) } } });
    for (const e of data.evidence) {
      const row = rows.find((r) => r.id === e.content_id)!;
      expect(sliceCodePoints(row.content, e.start_offset, e.end_offset)).toBe(e.quote);
    }
    const stored = await h.deps.db.insightEvidence.findMany({ where: { insight: { analysisId: result.data.analysis_id as string } } });
    expect(stored.map((s) => s.quote)).toEqual(data.insights[0]!.evidence.map((e) => e.quote));
  });

  it.each([
    ["not-json", /could not be read|expected shape|without message content/],
    ["http500", /answered HTTP 500/],
  ] as const)("falls back to the extractive answer when the model answers unusably (%s)", async (failure, reason) => {
    mode = failure;
    const stream = await openStream(`${base}/agent/v1/analysis/run`, {
      method: "POST",
      token: tenant.token,
      body: { question: "What do users think about Acme pricing?", entity_id: tenant.entityId },
    });
    await stream.closed;
    const result = stream.events.at(-1)!;
    expect(result.data.status).toBe("completed");
    const data = result.data.data as { engine: string; limitations: string[]; insights: unknown[] };
    expect(data.engine).toBe("extractive");
    expect(data.insights.length).toBeGreaterThan(0);
    expect(data.limitations.join(" ")).toMatch(reason);
  });
});
