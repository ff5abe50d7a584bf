import type { Response } from "undici";
import { z } from "zod";
import type { Config } from "../platform/config.js";
import { outboundFetch, trustedEndpoint } from "../platform/outbound.js";
import type { QuoteCandidate } from "./evidence.js";
import type { AnswerDraft, InsightDraft } from "./synthesis.js";

/**
 * Optional prose from an OpenAI-compatible chat model (LLM_BASE_URL, LLM_API_KEY,
 * LLM_MODEL). The model sees the question and numbered excerpts of stored originals and
 * answers JSON: an answer citing excerpts as [n] and insights whose evidence are quotes
 * it claims are verbatim. Nothing it says is trusted: its [n] become references to the
 * numbered excerpts (unknown numbers are dropped), and every quote and reference goes
 * through `verifyQuotes` with the rest. Any failure returns a reason, and the caller
 * keeps the extractive answer.
 */
export interface LlmExcerpt {
  content_id: string;
  platform: string;
  text: string;
}

export type LlmOutcome =
  | { ok: true; insights: InsightDraft[]; answer: AnswerDraft; unknownCitations: number }
  | { ok: false; reason: string };

const LlmAnswer = z.object({
  answer: z.string().min(1).max(20_000),
  insights: z
    .array(
      z.object({
        title: z.string().min(1).max(300),
        summary: z.string().max(4000).default(""),
        sentiment: z.enum(["positive", "negative", "mixed", "neutral"]).catch("neutral"),
        confidence: z.number().min(0).max(1).catch(0.5),
        evidence: z
          .array(z.object({ content_id: z.string(), quote: z.string() }))
          .max(20)
          .default([]),
      }),
    )
    .max(12)
    .default([]),
});

const SYSTEM_PROMPT = [
  "You are a research analyst. Answer the question using ONLY the numbered excerpts of stored sources.",
  'Reply with one JSON object: {"answer": string, "insights": [{"title", "summary", "sentiment" (positive|negative|mixed|neutral),',
  '"confidence" (0..1), "evidence": [{"content_id", "quote"}]}]}.',
  "Cite excerpts in the answer as [n]. Every quote must be copied character for character from an excerpt, with that excerpt's content_id.",
  "If the excerpts do not answer the question, say so.",
].join(" ");

export function buildPrompt(question: string, excerpts: LlmExcerpt[]): string {
  const lines = excerpts.map((e, i) => `[${i + 1}] content_id=${e.content_id} platform=${e.platform}\n${e.text}`);
  return `Question: ${question}\n\nExcerpts:\n${lines.join("\n\n")}`;
}

function parseContent(content: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(content);
  return JSON.parse((fenced?.[1] ?? content).trim());
}

export async function llmDraft(config: Config, question: string, excerpts: LlmExcerpt[]): Promise<LlmOutcome> {
  if (!config.LLM_BASE_URL) return { ok: false, reason: "no language model is configured" };
  let res: Response;
  try {
    res = await outboundFetch(
      `${config.LLM_BASE_URL.replace(/\/$/, "")}/chat/completions`,
      {
        method: "POST",
        headers: { "content-type": "application/json", ...(config.LLM_API_KEY ? { authorization: `Bearer ${config.LLM_API_KEY}` } : {}) },
        body: JSON.stringify({
          model: config.LLM_MODEL,
          temperature: 0,
          response_format: { type: "json_object" },
          messages: [
            { role: "system", content: SYSTEM_PROMPT },
            { role: "user", content: buildPrompt(question, excerpts) },
          ],
        }),
        signal: AbortSignal.timeout(config.LLM_TIMEOUT_MS),
      },
      trustedEndpoint(config.LLM_BASE_URL),
    );
  } catch (err) {
    return { ok: false, reason: `the language model could not be reached (${(err as Error).name})` };
  }
  if (!res.ok) {
    await res.body?.cancel();
    return { ok: false, reason: `the language model answered HTTP ${res.status}` };
  }
  let parsed: z.infer<typeof LlmAnswer>;
  try {
    const body = (await res.json()) as { choices?: { message?: { content?: unknown } }[] };
    const content = body.choices?.[0]?.message?.content;
    if (typeof content !== "string") return { ok: false, reason: "the language model answered without message content" };
    const result = LlmAnswer.safeParse(parseContent(content));
    if (!result.success) return { ok: false, reason: "the language model's answer did not have the expected shape" };
    parsed = result.data;
  } catch (err) {
    return { ok: false, reason: `the language model's answer could not be read (${(err as Error).name})` };
  }

  // [n] → a reference to excerpt n (the whole excerpt text is the quote it points at).
  const refs: QuoteCandidate[] = [];
  let unknownCitations = 0;
  const text = parsed.answer.replace(/\[(\d{1,4})\]/g, (_m, n: string) => {
    const excerpt = excerpts[Number(n) - 1];
    if (!excerpt) {
      unknownCitations++;
      return "";
    }
    refs.push({ content_id: excerpt.content_id, quote: excerpt.text });
    return `{{ref:${refs.length - 1}}}`;
  });
  const insights: InsightDraft[] = parsed.insights.map((i) => ({
    title: i.title,
    summary: i.summary,
    sentiment: i.sentiment,
    confidence: Math.round(i.confidence * 100) / 100,
    evidence: i.evidence.map((e) => ({ content_id: e.content_id, quote: e.quote })),
  }));
  return { ok: true, insights, answer: { text, refs }, unknownCitations };
}
