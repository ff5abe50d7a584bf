import type { EmbeddingProvider } from "../embed/provider.js";
import type { Config } from "../platform/config.js";
import type { Db } from "../platform/db.js";
import { type LlmExcerpt, llmDraft } from "./llm.js";
import { type RetrievedRow, retrieve } from "./retrieval.js";
import type { Depth, ResultData, SearchMode } from "./schemas.js";
import { resolveScope, scopeIsEmpty } from "./scope.js";
import { type Assembled, assemble, extractiveAnswer, extractiveInsights, quoteOf } from "./synthesis.js";
import { clusterThemes, scoreUnits, unitsOf } from "./themes.js";

/**
 * The analysis engine: scope → hybrid retrieval → opinion units → themes → insights with
 * verified evidence → answer with numbered citations. Extractive and deterministic by
 * default; with a chat model configured, the model writes the prose and its quotes and
 * citations pass the same verification (an unusable model answer falls back to the
 * extractive one, saying so in `limitations`).
 */
export const DEPTH_LIMITS: Record<Depth, { rows: number; units: number; insights: number; evidence: number; excerpts: number }> = {
  brief: { rows: 12, units: 40, insights: 3, evidence: 2, excerpts: 20 },
  deep: { rows: 40, units: 150, insights: 6, evidence: 4, excerpts: 60 },
};
/** Fewer distinct cited sources than this makes the result `partial`. */
export const MIN_SOURCES = 2;

export interface AnalysisRequest {
  id: string;
  userId: string;
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
    entityId: request.entityId,
    projectId: request.projectId,
    searchMode: request.searchMode,
    platforms: request.platforms,
    providedSources: request.providedSources,
  });

  const empty = (reasons: string[], inScope: Record<string, number> = {}): EngineOutput => ({
    status: "partial",
    entityOf: new Map(),
    data: {
      answer: "No stored evidence in scope answers this question, so no insight is offered.",
      citations: [],
      insights: [],
      evidence: [],
      coverage: coverage(inScope, [], null),
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
  if (retrieved.rows.length === 0) return empty(["No stored original in scope matches the question."], retrieved.inScopeByPlatform);

  await deps.progress("opinions", 0.4);
  const { units: rawUnits, computed } = await unitsOf(deps.db, retrieved.rows);
  if (computed > 0)
    limitations.push(`${computed} retrieved row(s) were not enriched yet; their opinion units were computed for this analysis.`);
  const units = scoreUnits(rawUnits, retrieved.rows, request.question);

  await deps.progress("themes", 0.55);
  const entityIds = [...new Set(retrieved.rows.map((r) => r.entityId))];
  const entities = await deps.db.entity.findMany({ where: { id: { in: entityIds } }, select: { name: true } });
  const themes = clusterThemes(
    units,
    request.question,
    limits.units,
    entities.map((e) => e.name),
  );
  const platformOf = new Map(retrieved.rows.map((r) => [r.id, r.platform]));
  const drafts = extractiveInsights(themes, platformOf, limits.insights, limits.evidence);

  await deps.progress("evidence", 0.7);
  let assembled = await assemble(deps.db, scope.workspaceIds, drafts, null);
  let engine: ResultData["engine"] = "extractive";
  let answer = extractiveAnswer(request.question, assembled.insights, retrieved.rows.length);

  if (deps.config.LLM_BASE_URL) {
    await deps.progress("synthesis", 0.8);
    const excerpts: LlmExcerpt[] = themes
      .flatMap((t) => t.units)
      .slice(0, limits.excerpts)
      .map((u) => ({ content_id: u.contentId, platform: platformOf.get(u.contentId) ?? "unknown", text: quoteOf(u).quote }));
    const outcome = await llmDraft(deps.config, request.question, excerpts);
    if (!outcome.ok) {
      limitations.push(`The language model was not used: ${outcome.reason}; the answer is extractive.`);
    } else {
      const fromModel = await assemble(deps.db, scope.workspaceIds, outcome.insights, outcome.answer);
      const removed = fromModel.dropped + outcome.unknownCitations;
      if (fromModel.evidence.length === 0) {
        limitations.push("The language model's answer cited nothing that could be verified; the answer is extractive.");
      } else {
        assembled = fromModel;
        engine = "llm";
        answer = fromModel.answer ?? answer;
        if (removed > 0) {
          limitations.push(
            `${removed} quote(s) or citation(s) from the language model were dropped: not verbatim in the cited stored original.`,
          );
        }
      }
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
      coverage: coverage(retrieved.inScopeByPlatform, retrieved.rows, assembled),
      limitations,
      engine,
      scope: scope.describe,
    },
  };
}
