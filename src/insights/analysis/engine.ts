import type { Config } from "../../platform/config.js";
import type { Db } from "../../platform/db.js";
import type { EmbeddingProvider } from "../embed/provider.js";
import { extractiveAnswer } from "./answer.js";
import { checkQuotes } from "./evidence.js";
import { findThemes } from "./findings.js";
import { focusOf, kindFit } from "./focus.js";
import { llmProse } from "./llm.js";
import { loadEntityNames, loadQuoteOriginals, loadStoredUnits } from "./load.js";
import { questionIntent } from "./question.js";
import { type EngineOutput, emptyOutput, finalOutput, proseThemes, type Written, withProse } from "./result.js";
import { retrieve } from "./retrieval.js";
import { topUpFromScope } from "./sample.js";
import type { Depth, SearchMode } from "./schemas.js";
import { resolveScope, scopeIsEmpty } from "./scope.js";
import { rollupFocus, scopeCounts } from "./scope-counts.js";
import { assemble, draftQuotes, extractiveInsights } from "./synthesis.js";
import { plural } from "./text.js";
import { themeSourcesOf } from "./theme-sources.js";
import { scopeSnapshot } from "./theme-sources-store.js";
import { countOverScope } from "./themes.js";
import { phraseEmbedder } from "./topics/embedder.js";
import { scoreUnits, unitsOf } from "./units.js";

export type { EngineOutput } from "./result.js";

/**
 * The analysis engine: scope → hybrid retrieval (topped up from the scope, see sample.ts)
 * → opinion units → aspects mined across the analysed sources → themes
 * (aspect, kind, polarity by distinct sources) → insights with verified evidence → an
 * answer to what was asked, with numbered citations. Extractive and deterministic by
 * default; with a chat model configured, the model writes the prose and its quotes and
 * citations pass the same verification (an unusable model answer falls back to the
 * extractive one, saying so in `limitations`).
 *
 * This function only orchestrates. The stages are pure functions of plain data (units.ts,
 * findings.ts, themes.ts, synthesis.ts, evidence.ts, answer.ts, result.ts); every read happens
 * here, between them, through the reading modules (scope.ts, retrieval.ts, sample.ts, load.ts,
 * scope-counts.ts), and the runner writes the result after (runner.ts):
 *
 *   read: scope, rows, entity names, stored units
 *   → units → themes                                              (pure)
 *   → read: the reported themes' counts over the whole scope (and the scope as counted)
 *   → counts merged → insight drafts                              (pure)
 *   → read: the originals the drafts quote → quote check → answer (pure)
 *   → the language model's prose, when configured → result         (call, then pure)
 *   → every source behind each insight (theme-sources.ts)          (pure)
 *
 * A deep analysis reports every aspect that at least COVERAGE_SHARE of the analysed
 * sources talk about (at least one source), up to `coverageCap` themes.
 */
export const DEPTH_LIMITS: Record<Depth, { rows: number; insights: number; coverageCap: number | null; evidence: number }> = {
  brief: { rows: 50, insights: 3, coverageCap: null, evidence: 2 },
  deep: { rows: 2000, insights: 6, coverageCap: 40, evidence: 4 },
};
export const COVERAGE_SHARE = 0.01;

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

export async function runEngine(deps: EngineDeps, request: AnalysisRequest): Promise<EngineOutput> {
  const { db } = deps;
  const limits = DEPTH_LIMITS[request.depth];
  const limitations: string[] = [];

  // Read: the scope, the rows analysed, the entities' names, the rows' stored units.
  await deps.progress("scope", 0.05);
  const scope = await resolveScope(db, {
    userId: request.userId,
    workspaceId: request.workspaceId,
    entityId: request.entityId,
    projectId: request.projectId,
    searchMode: request.searchMode,
    platforms: request.platforms,
    providedSources: request.providedSources,
  });
  const empty = (reasons: string[], more?: Parameters<typeof emptyOutput>[3]) => emptyOutput(scope.describe, limitations, reasons, more);
  if (scopeIsEmpty(scope)) return empty(scope.emptyReasons.length > 0 ? scope.emptyReasons : ["The scope holds no stored originals."]);

  await deps.progress("retrieve", 0.2);
  const retrieved = await retrieve(db, deps.embedder, scope, request.question, limits.rows);
  limitations.push(...retrieved.limitations);
  const inScope = retrieved.inScopeByPlatform;
  if (Object.keys(inScope).length === 0) return empty(["The scope holds no stored originals (nothing has been collected for it yet)."]);
  const entityNames = await loadEntityNames(db, scope);
  const intent = questionIntent(request.question, entityNames);
  const focus = focusOf(intent);
  const rows = scope.contentIds ? retrieved.rows : await topUpFromScope(db, scope, retrieved.rows, limits.rows, intent.aspects, focus);
  if (rows.length === 0) return empty(["No stored original in scope matches the question."], { inScope });

  await deps.progress("opinions", 0.4);
  const stored = await loadStoredUnits(db, rows);

  // Pure: units → aspects → themes, and the ones reported.
  const { units: rawUnits, computed } = unitsOf(rows, stored);
  if (computed > 0)
    limitations.push(`${computed} analysed row(s) were not enriched yet; their opinion units were computed for this analysis.`);
  const units = scoreUnits(rawUnits, rows, request.question);
  await deps.progress("themes", 0.55);
  const coverageMin = Math.max(1, Math.ceil(COVERAGE_SHARE * rows.length));
  const found = findThemes(units, rows, { intent, focus, entityNames }, { ...limits, coverageMin }, phraseEmbedder());
  // A focused question nothing answers is told so plainly, with no unrelated themes.
  if (!found.answered)
    return empty([`The question asks for ${found.noun}; the analysed sources hold none.`], {
      inScope,
      answer: `None of the ${plural(rows.length, "analysed source")} holds ${found.noun}, so no themes are listed.`,
      analysed: rows,
    });
  limitations.push(...found.limitations);

  // Read, between two pure stages: counts over every stored source in scope (the sample found the
  // themes and gives the quotes); they need the themes found, and the drafts' titles need them.
  // When the sample is everything in scope, its counts are the counts (the same rule for every answer).
  const storedInScope = Object.values(inScope).reduce((sum, n) => sum + n, 0);
  // The scope as counted (its entities, the moment), kept with each insight's sources to list the rest of them later.
  const snapshot = storedInScope > rows.length && !scope.contentIds ? await scopeSnapshot(db, scope, storedInScope) : null;
  const counts = storedInScope > rows.length ? await scopeCounts(db, scope, found.reported, focus, found.unnamed) : new Map();
  const counted = countOverScope(found.reported, counts);
  const drafts = extractiveInsights(
    counted,
    new Map(rows.map((r) => [r.id, r.platform])),
    new Map(rows.map((r) => [r.id, r.content])),
    limits.evidence,
    focus ? kindFit(focus, rows) : undefined,
  );

  // Read the originals the drafts quote, then pure: the quote check, the answer.
  await deps.progress("evidence", 0.7);
  const candidates = draftQuotes(drafts);
  const verification = checkQuotes(candidates, await loadQuoteOriginals(db, candidates), { workspaceIds: scope.workspaceIds });
  const assembled = assemble(drafts, verification);
  const focusAspects = found.reported.filter((t) => t.focus).map((t) => t.aspect);
  let written: Omit<Written, "limitations"> = {
    assembled,
    answer: extractiveAnswer(intent, assembled.insights, focusAspects, rows.length, storedInScope, found.instead),
    engine: "extractive",
  };

  // Call: the model writes the prose only; themes, counts and quotes stay the ones found in the evidence.
  if (deps.config.LLM_BASE_URL && assembled.insights.length > 0) {
    await deps.progress("synthesis", 0.8);
    const outcome = await llmProse(deps.config, request.question, proseThemes(assembled), deps.signal);
    const prose = withProse(assembled, written.answer, outcome);
    limitations.push(...prose.limitations);
    written = prose;
  }
  // Pure: every source behind each insight (its sample's, and what its count matched over the scope).
  const themeSources = themeSourcesOf(counted, written.assembled.insights, written.assembled.drafts, {
    focus: rollupFocus(focus),
    unnamed: found.unnamed,
    scope: snapshot,
  });
  return finalOutput(scope.describe, limitations, written, { inScope, analysed: rows }, { analysisId: request.id, themeSources });
}
