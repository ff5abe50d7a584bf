import type { EmbeddingProvider } from "../embed/provider.js";
import type { Config } from "../platform/config.js";
import type { Db } from "../platform/db.js";
import { extractiveAnswer } from "./answer.js";
import { mineAspects } from "./aspect-mining.js";
import { capabilityModel, focusedUnits, focusOf } from "./focus.js";
import { llmProse } from "./llm.js";
import { questionIntent } from "./question.js";
import { type RetrievedRow, retrieve } from "./retrieval.js";
import { topUpFromScope } from "./sample.js";
import type { Depth, ResultData, SearchMode } from "./schemas.js";
import { resolveScope, scopeIsEmpty } from "./scope.js";
import { scopeCounts } from "./scope-counts.js";
import { type Assembled, assemble, extractiveInsights } from "./synthesis.js";
import { plural } from "./text.js";
import { buildThemes, scoreUnits, selectThemes, unitsOf } from "./themes.js";

/**
 * The analysis engine: scope → hybrid retrieval (topped up from the scope, see sample.ts)
 * → opinion units → aspects mined across the analysed sources → themes
 * (aspect, kind, polarity by distinct sources) → insights with verified evidence → an
 * answer to what was asked, with numbered citations. Extractive and deterministic by
 * default; with a chat model configured, the model writes the prose and its quotes and
 * citations pass the same verification (an unusable model answer falls back to the
 * extractive one, saying so in `limitations`).
 *
 * A deep analysis reports every aspect that at least COVERAGE_SHARE of the analysed
 * sources talk about (at least one source), up to `coverageCap` themes.
 */
export const DEPTH_LIMITS: Record<Depth, { rows: number; insights: number; coverageCap: number | null; evidence: number }> = {
  brief: { rows: 50, insights: 3, coverageCap: null, evidence: 2 },
  deep: { rows: 2000, insights: 6, coverageCap: 40, evidence: 4 },
};
export const COVERAGE_SHARE = 0.03;
/** Fewer distinct cited sources than this makes the result `partial`. */
export const MIN_SOURCES = 2;

export interface AnalysisRequest {
  id: string;
  userId: string;
  workspaceId: string | null;
  question: string;
  searchMode: SearchMode | undefined;
  platforms: string[];
  depth: Depth;
  entityId: string | null;
  projectId: string | null;
  providedSources: string[];
}

export interface EngineDeps {
  db: Db;
  config: Config;
  embedder: EmbeddingProvider;
  progress: (step: string, progress: number) => Promise<void>;
  /** Aborts the engine's calls in flight (the language model's) once the analysis is cancelled. */
  signal?: AbortSignal;
}

export interface EngineOutput {
  status: "completed" | "partial";
  data: ResultData;
  /** Entity of each cited row, for storing insights. */
  entityOf: Map<string, string>;
}

function coverage(inScope: Record<string, number>, rows: RetrievedRow[], assembled: Assembled | null): ResultData["coverage"] {
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

export async function runEngine(deps: EngineDeps, request: AnalysisRequest): Promise<EngineOutput> {
  const limits = DEPTH_LIMITS[request.depth];
  const limitations: string[] = [];

  await deps.progress("scope", 0.05);
  const scope = await resolveScope(deps.db, {
    userId: request.userId,
    workspaceId: request.workspaceId,
    entityId: request.entityId,
    projectId: request.projectId,
    searchMode: request.searchMode,
    platforms: request.platforms,
    providedSources: request.providedSources,
  });

  const empty = (
    reasons: string[],
    inScope: Record<string, number> = {},
    answer = "No stored evidence in scope answers this question, so no insight is offered.",
    analysed: RetrievedRow[] = [],
  ): EngineOutput => ({
    status: "partial",
    entityOf: new Map(),
    data: {
      answer,
      citations: [],
      insights: [],
      evidence: [],
      coverage: coverage(inScope, analysed, null),
      limitations: [...reasons, ...limitations],
      engine: "extractive",
      scope: scope.describe,
    },
  });
  if (scopeIsEmpty(scope)) return empty(scope.emptyReasons.length > 0 ? scope.emptyReasons : ["The scope holds no stored originals."]);

  await deps.progress("retrieve", 0.2);
  const retrieved = await retrieve(deps.db, deps.embedder, scope, request.question, limits.rows);
  limitations.push(...retrieved.limitations);
  if (Object.keys(retrieved.inScopeByPlatform).length === 0)
    return empty(["The scope holds no stored originals (nothing has been collected for it yet)."]);
  const scopeEntities = await deps.db.entity.findMany({
    where: { workspaceId: { in: scope.workspaceIds }, ...(scope.entityIds ? { id: { in: scope.entityIds } } : {}) },
    select: { name: true },
  });
  const entityNames = scopeEntities.map((e) => e.name);
  const intent = questionIntent(request.question, entityNames);
  const focus = focusOf(intent);
  const rows = scope.contentIds ? retrieved.rows : await topUpFromScope(deps.db, scope, retrieved.rows, limits.rows, intent.aspects, focus);
  if (rows.length === 0) return empty(["No stored original in scope matches the question."], retrieved.inScopeByPlatform);

  await deps.progress("opinions", 0.4);
  const { units: rawUnits, computed } = await unitsOf(deps.db, rows);
  if (computed > 0)
    limitations.push(`${computed} analysed row(s) were not enriched yet; their opinion units were computed for this analysis.`);
  const units = scoreUnits(rawUnits, rows, request.question);

  await deps.progress("themes", 0.55);
  const mined = mineAspects(units, entityNames, rows.length);
  // A focused question is answered from the statements of the kind it asks for, and only from them.
  const asked = focus ? focusedUnits(focus, units, rows, mined) : units;
  // A focused question nothing answers is told so plainly, with no unrelated themes.
  if (focus && asked.length === 0)
    return empty(
      [`The question asks for ${focus.noun}; the analysed sources hold none.`],
      retrieved.inScopeByPlatform,
      `None of the ${plural(rows.length, "analysed source")} holds ${focus.noun}, so no themes are listed.`,
      rows,
    );
  const capabilities = focus?.ask === "requests" ? capabilityModel(mined, asked) : null;
  const model = capabilities ?? mined;
  const themes = buildThemes(asked, model, intent);
  const coverageMin = Math.max(1, Math.ceil(COVERAGE_SHARE * rows.length));
  const reported = selectThemes(
    themes,
    intent,
    limits.insights,
    limits.coverageCap === null ? undefined : { minSources: coverageMin, cap: limits.coverageCap },
  );
  const reportedAspects = new Set(reported.map((t) => t.aspect));
  const left = new Set(themes.filter((t) => t.mentions >= coverageMin && !reportedAspects.has(t.aspect)).map((t) => t.aspect));
  if (limits.coverageCap !== null && left.size > 0)
    limitations.push(
      `${plural(left.size, "more aspect")} that enough sources mention did not fit in the ${reported.length} themes reported.`,
    );
  const platformOf = new Map(rows.map((r) => [r.id, r.platform]));
  // Counts over every stored source in scope; the sample found the themes and gives the quotes.
  const inScope = await scopeCounts(deps.db, scope, reported, focus, capabilities?.capabilities ?? new Set());
  const counted = reported.map((t, i) => {
    const all = inScope.get(i);
    if (!all) return t;
    // The sample's count is a floor: a source whose stored units predate the analyser counts there.
    const counts = {
      complaint: Math.max(all.complaint, t.counts.complaint),
      praise: Math.max(all.praise, t.counts.praise),
      request: Math.max(all.request, t.counts.request),
      neutral: Math.max(all.neutral, t.counts.neutral),
    };
    return { ...t, counts, sources: Math.max(counts[t.polarity], t.sources), analysed: t.sources };
  });
  const drafts = extractiveInsights(counted, platformOf, new Map(rows.map((r) => [r.id, r.content])), limits.evidence);

  await deps.progress("evidence", 0.7);
  let assembled = await assemble(deps.db, scope.workspaceIds, drafts);
  let engine: ResultData["engine"] = "extractive";
  const focusAspects = reported.filter((t) => t.focus).map((t) => t.aspect);
  const stored = Object.values(retrieved.inScopeByPlatform).reduce((sum, n) => sum + n, 0);
  let answer = extractiveAnswer(intent, assembled.insights, focusAspects, rows.length, stored);

  if (deps.config.LLM_BASE_URL && assembled.insights.length > 0) {
    await deps.progress("synthesis", 0.8);
    // The model writes the prose only: themes, counts and quotes stay the ones found in the evidence.
    const outcome = await llmProse(
      deps.config,
      request.question,
      assembled.insights.map((i) => ({
        title: i.title,
        summary: i.summary,
        evidence: i.evidence.map((e) => ({ number: e.number, quote: e.quote })),
      })),
      deps.signal,
    );
    if (!outcome.ok) {
      limitations.push(`The language model was not used: ${outcome.reason}; the answer is extractive.`);
    } else {
      engine = "llm";
      if (outcome.answer) answer = outcome.answer;
      else limitations.push("The language model's answer held nothing that could be verified; the answer is extractive.");
      assembled = {
        ...assembled,
        insights: assembled.insights.map((insight, i) => ({ ...insight, summary: outcome.summaries[i] ?? insight.summary })),
      };
      const { citations, quotes } = outcome.removed;
      if (quotes > 0)
        limitations.push(
          `${plural(quotes, "quote")} written by the language model ${quotes === 1 ? "was" : "were"} not verbatim in the evidence and ${quotes === 1 ? "was" : "were"} dropped with the sentence holding ${quotes === 1 ? "it" : "them"}.`,
        );
      if (citations > 0)
        limitations.push(
          `${plural(citations, "citation")} from the language model named no quote it was given and ${citations === 1 ? "was" : "were"} dropped.`,
        );
    }
  }

  const citedRows = new Set(assembled.evidence.map((e) => e.content_id)).size;
  if (assembled.insights.length === 0) limitations.push("No opinion in the retrieved rows could be tied to the question.");
  else if (citedRows < MIN_SOURCES) limitations.push(`Only ${citedRows} source supports the answer; treat it as anecdotal.`);
  const status = assembled.insights.length > 0 && citedRows >= MIN_SOURCES ? "completed" : "partial";

  return {
    status,
    entityOf: new Map(assembled.verified.map((v) => [v.content_id, v.entity_id])),
    data: {
      answer,
      citations: assembled.citations,
      insights: assembled.insights,
      evidence: assembled.evidence,
      coverage: coverage(retrieved.inScopeByPlatform, rows, assembled),
      limitations,
      engine,
      scope: scope.describe,
    },
  };
}
