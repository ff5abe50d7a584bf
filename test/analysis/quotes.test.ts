import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { verifyQuotes } from "../../src/insights/analysis/load.js";
import { sliceCodePoints } from "../../src/insights/enrichment/opinions.js";
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

const MODEL_SUMMARY = "Several sources find the price too high for small teams";

/** The themes of the prompt: "Theme k: title" followed by its numbered quotes `[n] "quote"`. */
function themesOf(prompt: string): { k: number; title: string; quotes: { n: number; quote: string }[] }[] {
  return prompt
    .split(/\n(?=Theme \d+: )/)
    .filter((block) => block.startsWith("Theme "))
    .map((block) => {
      const [head, ...lines] = block.split("\n");
      const [, k, title] = /^Theme (\d+): (.*)$/.exec(head ?? "") ?? [];
      const quotes = lines.flatMap((l) => {
        const m = /^\s+\[(\d+)\] (".*")$/.exec(l);
        return m ? [{ n: Number(m[1]), quote: JSON.parse(m[2] ?? '""') as string }] : [];
      });
      return { k: Number(k), title: title ?? "", quotes };
    });
}

/** A model that writes good prose, an invented quote, a citation of nothing and a summary quoting nothing it saw. */
function chatAnswer(body: Record<string, unknown>) {
  const messages = body.messages as { role: string; content: string }[];
  const themes = themesOf(messages.find((m) => m.role === "user")!.content.split("Themes:\n")[1] ?? "");
  const [first, second] = themes;
  const n = first!.quotes[0]!.n;
  const content = {
    answer: `Pricing is the main complaint [${n}]. One user called it "${FABRICATED}" [${n}]. Others disagree [99].`,
    summaries: [
      { theme: first!.k, summary: `${MODEL_SUMMARY} [${n}].` },
      ...(second ? [{ theme: second.k, summary: 'One source said "a sentence that appears nowhere at all".' }] : []),
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
    (await h.deps.db.content.count({ where: { id: { in: ids }, enrichment: { enrichedAt: { not: null } } } })) === ids.length
      ? true
      : undefined,
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
  const analyse = async () => {
    const stream = await openStream(`${base}/agent/v1/analysis/run`, {
      method: "POST",
      token: tenant.token,
      body: { question: "What do users think about Acme pricing?", entity_id: tenant.entityId },
    });
    await stream.closed;
    const result = stream.events.at(-1)!;
    expect(result.event).toBe("result");
    return { stream, result };
  };
  type Data = {
    answer: string;
    engine: string;
    insights: {
      title: string;
      summary: string;
      polarity: string;
      sources: number;
      evidence: { number: number; content_id: string; quote: string }[];
    }[];
    evidence: { number: number; content_id: string; quote: string; start_offset: number; end_offset: number }[];
    limitations: string[];
  };

  it("uses the model's prose only: themes, counts and quotes stay the evidence's; invented quotes and citations are dropped and reported", async () => {
    mode = "http500";
    const extractive = (await analyse()).result.data.data as Data;
    mode = "fabricate";
    llmRequests.length = 0;
    const { stream, result } = await analyse();
    const data = result.data.data as Data;

    expect(llmRequests).toHaveLength(1);
    expect(llmRequests[0]!.headers.authorization).toBe("Bearer llm-test-key");
    expect(llmRequests[0]!.body).toMatchObject({ model: "test-model", temperature: 0 });
    expect(stream.events.some((e) => e.event === "progress" && e.data.step === "synthesis")).toBe(true);

    expect(data.engine).toBe("llm");
    // The themes, their polarity, counts and quotes are exactly the extractive engine's.
    const shape = (d: Data) => d.insights.map((i) => ({ title: i.title, polarity: i.polarity, sources: i.sources, evidence: i.evidence }));
    expect(shape(data)).toEqual(shape(extractive));
    expect(data.evidence).toEqual(extractive.evidence);
    // The model's summary of the first theme is used; the second, quoting nothing it saw, is not.
    expect(data.insights[0]!.summary).toMatch(MODEL_SUMMARY);
    if (data.insights[1]) expect(data.insights[1].summary).toBe(extractive.insights[1]!.summary);

    const text = JSON.stringify(result.data);
    expect(text).not.toContain(FABRICATED);
    expect(text).not.toContain("appears nowhere");
    expect(text).not.toContain(SUMMARY_TEXT);
    expect(data.answer).toMatch(/^Pricing is the main complaint \[\d+\]\./);
    expect(data.answer).not.toContain("[99]");
    for (const m of data.answer.matchAll(/\[(\d+)\]/g)) expect(data.evidence.find((e) => e.number === Number(m[1]))).toBeDefined();
    const limitations = data.limitations.join(" ");
    expect(limitations).toMatch(/quotes? written by the language model (was|were) not verbatim/);
    expect(limitations).toMatch(/1 citation from the language model named no quote/);

    const rows = await h.deps.db.content.findMany({ where: { id: { in: data.evidence.map((e) => e.content_id) } } });
    for (const e of data.evidence) {
      const row = rows.find((r) => r.id === e.content_id)!;
      expect(sliceCodePoints(row.content, e.start_offset, e.end_offset)).toBe(e.quote);
    }
    const stored = await h.deps.db.insightEvidence.findMany({ where: { insight: { analysisId: result.data.analysis_id as string } } });
    expect(stored.map((s) => s.quote).sort()).toEqual(data.insights.flatMap((i) => i.evidence.map((e) => e.quote)).sort());
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
