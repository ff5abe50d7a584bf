import type { Workflow } from "../onboarding/schemas.js";

/**
 * The price table, in credits. A run costs a base fee, plus collection per platform and per source
 * when it refreshes its evidence, plus analysis per source, all scaled by the model cost tier and
 * the depth. The approved maximum leaves headroom above the estimate for a run that finds more than
 * expected; the settled charge is the actual cost and never exceeds the approved maximum.
 */
export const PRICE_TABLE = {
  base: 5,
  collectionPerPlatform: 10,
  collectionPerSource: 0.5,
  analysisPerSource: 0.2,
  /** Each started week of lookback beyond the first adds this share of the collection cost. */
  lookbackWeeklyFactor: 0.25,
  costTier: { low: 0.5, medium: 1, high: 2, premium: 4 } as Record<string, number>,
  depth: { brief: 1, deep: 2 } as Record<string, number>,
  maxHeadroom: 1.25,
} as const;

export type SourceMode = "saved" | "refresh";

export interface RunScope {
  skill_id: string;
  skill_revision: number;
  entity_id: string;
  source_mode: SourceMode;
  question: string;
  depth: "brief" | "deep";
  platforms: string[];
  max_sources: number;
  lookback_days: number;
  cost_tier: string;
  allowed_models: string[];
  instructions: string;
  filter_relevance: boolean;
}

export function runScope(
  skill: { key: string; revision: number; entityId: string; question: string; title: string },
  workflow: Workflow,
  entityPlatforms: string[],
  sourceMode: SourceMode,
): RunScope {
  const inputs = workflow.inputs as Workflow["inputs"] & { depth?: string };
  const platforms = inputs.platforms.length > 0 ? [...inputs.platforms] : [...entityPlatforms];
  return {
    skill_id: skill.key,
    skill_revision: skill.revision,
    entity_id: skill.entityId,
    source_mode: sourceMode,
    question: skill.question || skill.title,
    depth: inputs.depth === "deep" ? "deep" : "brief",
    platforms: platforms.sort(),
    max_sources: inputs.max_sources,
    lookback_days: inputs.lookback_days,
    cost_tier: workflow.model_routing.cost_tier,
    allowed_models: [...workflow.model_routing.allowed_models].sort(),
    instructions: workflow.instructions,
    filter_relevance: workflow.filter_relevance,
  };
}

export interface PriceBreakdown {
  base: number;
  collection: number;
  analysis: number;
  platforms: number;
  sources: number;
  cost_tier_multiplier: number;
  depth_multiplier: number;
  price_table: typeof PRICE_TABLE;
}

/** Credits for a scope that collects on `platforms` platforms and analyses `sources` sources. */
export function price(scope: RunScope, usage: { platforms: number; sources: number }): { credits: number; breakdown: PriceBreakdown } {
  const weeks = Math.max(1, Math.ceil(scope.lookback_days / 7));
  const lookback = 1 + (weeks - 1) * PRICE_TABLE.lookbackWeeklyFactor;
  const collection =
    scope.source_mode === "refresh"
      ? (usage.platforms * PRICE_TABLE.collectionPerPlatform + usage.sources * PRICE_TABLE.collectionPerSource) * lookback
      : 0;
  const analysis = usage.sources * PRICE_TABLE.analysisPerSource;
  const tier = PRICE_TABLE.costTier[scope.cost_tier] ?? PRICE_TABLE.costTier.medium!;
  const depth = PRICE_TABLE.depth[scope.depth] ?? 1;
  const credits = Math.ceil((PRICE_TABLE.base + collection + analysis) * tier * depth);
  return {
    credits,
    breakdown: {
      base: PRICE_TABLE.base,
      collection: Math.round(collection * 100) / 100,
      analysis: Math.round(analysis * 100) / 100,
      platforms: usage.platforms,
      sources: usage.sources,
      cost_tier_multiplier: tier,
      depth_multiplier: depth,
      price_table: PRICE_TABLE,
    },
  };
}

/** The estimate assumes every platform is collected and `max_sources` sources are analysed. */
export function estimate(scope: RunScope) {
  const { credits, breakdown } = price(scope, { platforms: scope.platforms.length, sources: scope.max_sources });
  return { estimated: credits, maximum: Math.ceil(credits * PRICE_TABLE.maxHeadroom), breakdown };
}
