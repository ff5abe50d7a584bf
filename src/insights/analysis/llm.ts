import type { Response } from "undici";
import { z } from "zod";
import type { Config } from "../../platform/config.js";
import { outboundFetch, trustedEndpoint } from "../../platform/outbound.js";
import { MIN_QUOTE_CHARS } from "./evidence.js";

/**
 * Optional prose from an OpenAI-compatible chat model (LLM_BASE_URL, LLM_API_KEY,
 * LLM_MODEL). The model writes words only: the answer and a summary per theme. The themes,
 * their polarity and counts, and every quote stay the extractive engine's, taken from the
 * stored evidence. The model sees the question and the themes with their numbered, verified
 * quotes, and nothing it says is trusted:
 * - a citation `[n]` must name one of the numbered quotes (of that theme, for a summary);
 *   any other is removed;
 * - text it puts in quotation marks must be a verbatim piece of a quote it was shown (of that
 *   theme, for a summary); a sentence of the answer holding an invented quote is removed, and
 *   a summary holding one is replaced by the extractive summary.
 * Everything removed is counted for `limitations`. Any failure returns a reason, and the
 * caller keeps the extractive prose.
 */
export interface ProseTheme {
  title: string;
  summary: string;
  evidence: { number: number; quote: string }[];
}

export interface ProseRemovals {
  /** `[n]` naming no quote the model was shown (or not one of the theme's, in a summary). */
  citations: number;
  /** Quoted text that is not a verbatim piece of a quote the model was shown. */
  quotes: number;
}

export type LlmOutcome =
  | { ok: true; answer: string | null; summaries: (string | null)[]; removed: ProseRemovals }
  | { ok: false; reason: string };

const LlmProse = z.object({
  answer: z.string().min(1).max(20_000),
  summaries: z
    .array(z.object({ theme: z.number().int(), summary: z.string().max(4000) }))
    .max(100)
    .default([]),
});

const SYSTEM_PROMPT = [
  "You are a research analyst. You are given a question and the themes found in stored sources, each with its polarity,",
  "its count of distinct sources and numbered verbatim quotes. Use ONLY these themes and quotes; do not invent themes or counts.",
  'Reply with one JSON object: {"answer": string, "summaries": [{"theme": number, "summary": string}]}.',
  "The answer addresses the question directly, leading with what it asks about; cite quotes as [n].",
  "Counts are sources, never people. Text in quotation marks must be copied character for character from a quote.",
  "A summary describes one theme in one or two sentences and may cite only that theme's quotes.",
].join(" ");

export function buildPrompt(question: string, themes: ProseTheme[]): string {
  const lines = themes.map((t, i) =>
    [`Theme ${i + 1}: ${t.title}`, ...t.evidence.map((e) => `  [${e.number}] ${JSON.stringify(e.quote)}`)].join("\n"),
  );
  return `Question: ${question}\n\nThemes:\n${lines.join("\n\n")}`;
}

function parseContent(content: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(content);
  return JSON.parse((fenced?.[1] ?? content).trim());
}

const QUOTED = /["“„«]([^"“”„«»]+)["”»]/gu;
const segmenter = new Intl.Segmenter("en", { granularity: "sentence" });

/**
 * Prose checked against the quotes it may use: unknown citations removed, and each sentence
 * holding quoted text that is not a verbatim piece of an allowed quote removed whole.
 */
export function checkProse(
  text: string,
  allowed: { number: number; quote: string }[],
): { text: string; citations: number; quotes: number; changed: boolean } {
  const numbers = new Set(allowed.map((e) => e.number));
  let citations = 0;
  let quotes = 0;
  const kept: string[] = [];
  for (const { segment } of segmenter.segment(text)) {
    const invented = [...segment.matchAll(QUOTED)]
      .map((m) => (m[1] ?? "").trim())
      .filter((q) => Array.from(q).length >= MIN_QUOTE_CHARS && !allowed.some((e) => e.quote.includes(q)));
    if (invented.length > 0) {
      quotes += invented.length;
      continue;
    }
    kept.push(
      segment.replace(/\s?\[(\d{1,6})\]/g, (m, n: string) => {
        if (numbers.has(Number(n))) return m;
        citations++;
        return "";
      }),
    );
  }
  const out = kept.join("").trim();
  return { text: out, citations, quotes, changed: out !== text.trim() };
}

export async function llmProse(config: Config, question: string, themes: ProseTheme[], signal?: AbortSignal): Promise<LlmOutcome> {
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
            { role: "user", content: buildPrompt(question, themes) },
          ],
        }),
        // A cancelled analysis aborts the call rather than waiting out the model.
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(config.LLM_TIMEOUT_MS)]) : AbortSignal.timeout(config.LLM_TIMEOUT_MS),
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
  let parsed: z.infer<typeof LlmProse>;
  try {
    const body = (await res.json()) as { choices?: { message?: { content?: unknown } }[] };
    const content = body.choices?.[0]?.message?.content;
    if (typeof content !== "string") return { ok: false, reason: "the language model answered without message content" };
    const result = LlmProse.safeParse(parseContent(content));
    if (!result.success) return { ok: false, reason: "the language model's answer did not have the expected shape" };
    parsed = result.data;
  } catch (err) {
    return { ok: false, reason: `the language model's answer could not be read (${(err as Error).name})` };
  }

  const removed: ProseRemovals = { citations: 0, quotes: 0 };
  const answer = checkProse(
    parsed.answer,
    themes.flatMap((t) => t.evidence),
  );
  removed.citations += answer.citations;
  removed.quotes += answer.quotes;

  const summaries: (string | null)[] = themes.map(() => null);
  for (const { theme, summary } of parsed.summaries) {
    const target = themes[theme - 1];
    if (!target || summaries[theme - 1] !== null || summary.trim() === "") continue;
    const checked = checkProse(summary, target.evidence);
    removed.citations += checked.citations;
    removed.quotes += checked.quotes;
    // A summary that had to be cut is not the model's summary any more: the extractive one stands.
    summaries[theme - 1] = checked.changed || checked.text === "" ? null : checked.text;
  }
  return { ok: true, answer: answer.text === "" ? null : answer.text, summaries, removed };
}
