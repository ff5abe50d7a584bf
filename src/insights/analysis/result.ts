import type { LlmOutcome, ProseTheme } from "./llm.js";
import type { RetrievedRow } from "./retrieval.js";
import type { ResultData } from "./schemas.js";
import type { Assembled } from "./synthesis.js";
import { plural } from "./text.js";
import type { ThemeSourcesOutput } from "./theme-sources.js";

/**
 * The result stage (pure): the language model's prose applied to an assembled answer, and the
 * engine's output (status, limitations, coverage per platform) from what the stages found.
 */
export interface EngineOutput {
  status: "completed" | "partial";
  data: ResultData;
  /** Entity of each cited row, for storing insights. */
  entityOf: Map<string, string>;
  /** Every source behind each insight, stored with the result (theme-sources.ts); null when there is no insight. */
  themeSources: ThemeSourcesOutput | null;
}

/** Fewer distinct cited sources than this makes the result `partial`. */
export const MIN_SOURCES = 2;

export const NOTHING_ANSWERS = "No stored evidence in scope answers this question, so no insight is offered.";

type Platformed = Pick<RetrievedRow, "platform">;

/** Per platform: originals stored in scope, rows analysed, rows cited. */
export function coverageOf(inScope: Record<string, number>, rows: Platformed[], assembled: Assembled | null): ResultData["coverage"] {
  const out: ResultData["coverage"] = {};
  const bump = (platform: string, field: "retrieved" | "cited") => {
    out[platform] ??= { in_scope: inScope[platform] ?? 0, retrieved: 0, cited: 0 };
    out[platform][field]++;
  };
  for (const [platform, n] of Object.entries(inScope)) out[platform] = { in_scope: n, retrieved: 0, cited: 0 };
  for (const row of rows) bump(row.platform, "retrieved");
  const citedRows = new Map<string, string>();
  for (const e of assembled?.evidence ?? []) citedRows.set(e.content_id, e.platform);
  for (const platform of citedRows.values()) bump(platform, "cited");
  return out;
}

/** A partial result with no insight: the reasons first, then the limitations met on the way. */
export function emptyOutput(
  scope: ResultData["scope"],
  limitations: string[],
  reasons: string[],
  {
    inScope = {},
    answer = NOTHING_ANSWERS,
    analysed = [],
  }: { inScope?: Record<string, number>; answer?: string; analysed?: Platformed[] } = {},
): EngineOutput {
  return {
    status: "partial",
    entityOf: new Map(),
    themeSources: null,
    data: {
      answer,
      citations: [],
      insights: [],
      evidence: [],
      coverage: coverageOf(inScope, analysed, null),
      limitations: [...reasons, ...limitations],
      engine: "extractive",
      scope,
    },
  };
}

/** What the language model is shown: the assembled themes with their numbered, verified quotes. */
export function proseThemes(assembled: Assembled): ProseTheme[] {
  return assembled.insights.map((i) => ({
    title: i.title,
    summary: i.summary,
    evidence: i.evidence.map((e) => ({ number: e.number, quote: e.quote })),
  }));
}

export interface Written {
  assembled: Assembled;
  answer: string;
  engine: ResultData["engine"];
  /** What using the model (or failing to) adds to the limitations. */
  limitations: string[];
}

/**
 * The model's prose over the extractive answer: its answer and summaries where it gave usable ones;
 * themes, counts and quotes stay the assembled ones. A failed call keeps the extractive prose.
 */
export function withProse(assembled: Assembled, answer: string, outcome: LlmOutcome): Written {
  if (!outcome.ok)
    return {
      assembled,
      answer,
      engine: "extractive",
      limitations: [`The language model was not used: ${outcome.reason}; the answer is extractive.`],
    };
  const limitations: string[] = [];
  if (!outcome.answer) limitations.push("The language model's answer held nothing that could be verified; the answer is extractive.");
  const { citations, quotes } = outcome.removed;
  if (quotes > 0)
    limitations.push(
      `${plural(quotes, "quote")} written by the language model ${quotes === 1 ? "was" : "were"} not verbatim in the evidence and ${quotes === 1 ? "was" : "were"} dropped with the sentence holding ${quotes === 1 ? "it" : "them"}.`,
    );
  if (citations > 0)
    limitations.push(
      `${plural(citations, "citation")} from the language model named no quote it was given and ${citations === 1 ? "was" : "were"} dropped.`,
    );
  return {
    assembled: {
      ...assembled,
      insights: assembled.insights.map((insight, i) => ({ ...insight, summary: outcome.summaries[i] ?? insight.summary })),
    },
    answer: outcome.answer || answer,
    engine: "llm",
    limitations,
  };
}

/** Where an insight's every source is listed (GET /agent/v1/analysis/{id}/insights/{n}/sources). */
export const insightSourcesPath = (analysisId: string, n: number) => `/agent/v1/analysis/${analysisId}/insights/${n}/sources`;

/** Each insight's `id` (its number in the analysis, 1-based) and the link to every source behind it. */
export function numberInsights(insights: ResultData["insights"], analysisId: string): ResultData["insights"] {
  return insights.map((insight, k) => ({ id: k + 1, ...insight, sources_url: insightSourcesPath(analysisId, k + 1) }));
}

/** The engine's output: `completed` when insights stand on at least MIN_SOURCES cited sources. */
export function finalOutput(
  scope: ResultData["scope"],
  limitations: string[],
  written: Omit<Written, "limitations">,
  coverage: { inScope: Record<string, number>; analysed: Platformed[] },
  sources: { analysisId: string; themeSources: ThemeSourcesOutput | null } | null = null,
): EngineOutput {
  const { assembled, answer, engine } = written;
  const citedRows = new Set(assembled.evidence.map((e) => e.content_id)).size;
  const notes = [...limitations];
  if (assembled.insights.length === 0) notes.push("No opinion in the retrieved rows could be tied to the question.");
  else if (citedRows < MIN_SOURCES) notes.push(`Only ${citedRows} source supports the answer; treat it as anecdotal.`);
  return {
    status: assembled.insights.length > 0 && citedRows >= MIN_SOURCES ? "completed" : "partial",
    entityOf: new Map(assembled.verified.map((v) => [v.content_id, v.entity_id])),
    themeSources: sources?.themeSources ?? null,
    data: {
      answer,
      citations: assembled.citations,
      insights: sources ? numberInsights(assembled.insights, sources.analysisId) : assembled.insights,
      evidence: assembled.evidence,
      coverage: coverageOf(coverage.inScope, coverage.analysed, assembled),
      limitations: notes,
      engine,
      scope,
    },
  };
}
