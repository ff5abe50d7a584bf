import { createHash } from "node:crypto";
import { entityForUser } from "../../access/workspaces/access.js";
import { createHttpClient } from "../../intake/collection/collectors/http.js";
import { defaultCollectors } from "../../intake/collection/collectors/index.js";
import { entityTerms, orQuery } from "../../intake/collection/collectors/query.js";
import type { Collector, CollectorInput } from "../../intake/collection/collectors/types.js";
import { webTargets } from "../../intake/collection/collectors/web.js";
import { canonicalJson } from "../../platform/canonical.js";
import type { Db } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { SKELETON_WORKFLOW } from "../onboarding/schemas.js";
import { workflowOf } from "../skills/service.js";
import { type LatestRecord, latestRecords } from "./coverage.js";
import type { CollectionPlan, PlanTask } from "./schemas.js";

/**
 * The collection plan of an entity: what an agent collecting with its own tools should read
 * (the saved scope), and one task per platform and target with the query to run, the window,
 * what the last collection of that target recorded and the cursor to resume from. Queries are
 * built by the same functions the server's collectors use, so an agent and a collection job
 * search alike. Reading a plan changes nothing and starts nothing.
 *
 * - Platforms: the entity's own; when it lists none, its company's (onboarding saves platforms
 *   on the company only); when neither lists any, there are no tasks.
 * - Window and source limit: the widest `lookback_days` and largest `max_sources` among the
 *   company's saved workflows (skills), else the workflow skeleton's (7 days, 25 sources).
 */
type EntityRow = Awaited<ReturnType<typeof entityForUser>>;

/** Platforms whose originals are the team's own or written by agents: never searched, only their saved targets. */
const FIRST_PARTY = new Set(["meetingnotes", "slack", "agent", "claude_code", "codex"]);
const DAY_MS = 86_400_000;

const targetsOf = (entity: EntityRow) =>
  entity.collectionTargets && typeof entity.collectionTargets === "object" && !Array.isArray(entity.collectionTargets)
    ? (entity.collectionTargets as Record<string, unknown>)
    : {};

function toRef(entity: EntityRow) {
  return {
    id: entity.id,
    kind: entity.kind,
    name: entity.name,
    url: entity.url,
    keywords: entity.keywords,
    platforms: entity.platforms,
    collection_targets: targetsOf(entity),
  };
}

/** The company an entity belongs to: itself, or the nearest company among its parents. */
async function companyOf(db: Db, entity: EntityRow): Promise<EntityRow | null> {
  let current: EntityRow | null = entity;
  for (let depth = 0; current && depth < 8; depth++) {
    if (current.kind === "company") return current;
    if (!current.parentEntityId) return null;
    current = await db.entity.findFirst({ where: { id: current.parentEntityId, workspaceId: entity.workspaceId } });
  }
  return null;
}

/** Account targets saved for a platform: `collection_targets[platform]` as a string or a list of strings or `{target|url|handle|account}`. */
function accountTargets(targets: Record<string, unknown>, platform: string): string[] {
  const raw = targets[platform];
  const list = Array.isArray(raw) ? raw : raw === undefined || raw === null ? [] : [raw];
  const out: string[] = [];
  for (const item of list) {
    const value =
      typeof item === "string"
        ? item
        : item && typeof item === "object"
          ? ["target", "url", "handle", "account"].map((k) => (item as Record<string, unknown>)[k]).find((v) => typeof v === "string")
          : undefined;
    const trimmed = typeof value === "string" ? value.trim() : "";
    if (trimmed && !out.includes(trimmed)) out.push(trimmed.slice(0, 2000));
  }
  return out.slice(0, 50);
}

const shortHash = (...parts: string[]) => createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 24);

interface PlannedTarget {
  platform: string;
  target: string;
  target_type: PlanTask["target_type"];
  query: string;
  server_collector: boolean;
}

function plannedTargets(deps: Pick<AppDeps, "config">, entity: EntityRow, platform: string, since: Date, notes: string[]): PlannedTarget[] {
  const collector: Collector | undefined = defaultCollectors[platform];
  const input: CollectorInput = {
    entity: { id: entity.id, name: entity.name, url: entity.url, keywords: entity.keywords, collectionTargets: entity.collectionTargets },
    objective: "",
    questions: [],
    depth: "brief",
    since,
    pageSize: deps.config.COLLECTOR_PAGE_SIZE,
    maxComments: deps.config.COLLECTOR_MAX_COMMENTS,
    config: deps.config,
    // Never used: describing a query reads nothing.
    http: createHttpClient({ timeoutMs: 1, retries: 0, requestsPerSecond: 1, maxRetryAfterMs: 0 }),
  };
  const out: PlannedTarget[] = [];
  if (platform === "web") {
    const urls = webTargets(input);
    if (urls.length === 0) notes.push("web: the entity has no url and no collection_targets URLs, so there is nothing to read.");
    for (const url of urls.slice(0, 100)) out.push({ platform, target: url, target_type: "url", query: url, server_collector: true });
  } else if (collector) {
    const query = collector.describe(input).slice(0, 5000);
    const target = (collector.searchTarget?.(input) ?? query).slice(0, 2000);
    out.push({ platform, target, target_type: "search_query", query, server_collector: true });
  } else if (!FIRST_PARTY.has(platform)) {
    const query = orQuery(entityTerms(input));
    if (query) out.push({ platform, target: query.slice(0, 2000), target_type: "search_query", query, server_collector: false });
  }
  for (const account of accountTargets(targetsOf(entity), platform)) {
    out.push({
      platform,
      target: account,
      target_type: /^https?:\/\//i.test(account) ? "url" : "account",
      query: account,
      server_collector: false,
    });
  }
  if (out.length === 0 && FIRST_PARTY.has(platform)) {
    notes.push(
      platform === "meetingnotes"
        ? "meetingnotes: notes are imported with POST /api/meetingnotes/sync, not searched."
        : `${platform}: no saved targets under collection_targets.${platform}; originals of this platform are written by connected tools or agents, not searched.`,
    );
  }
  return out;
}

function lastRunOf(record: LatestRecord | undefined, planned: PlannedTarget) {
  const row = record?.targets.find((t) => t.target === planned.target);
  if (!row) return null;
  return {
    target: row.target,
    target_type: row.targetType,
    status: row.status,
    items_found: row.itemsFound,
    items_stored: row.itemsStored,
    cursor_start: row.cursorStart,
    cursor_end: row.cursorEnd,
    reached_end: row.reachedEnd,
    error: row.error,
  };
}

export async function collectionPlan(deps: Pick<AppDeps, "db" | "config">, userId: string, entityId: string): Promise<CollectionPlan> {
  const { db } = deps;
  const entity = await entityForUser(db, userId, entityId);
  const company = await companyOf(db, entity);
  const [related, skills] = await Promise.all([
    company
      ? db.entity.findMany({
          where: { parentEntityId: company.id, workspaceId: entity.workspaceId, kind: { in: ["product", "competitor"] } },
          orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        })
      : Promise.resolve([]),
    db.skill.findMany({ where: { entityId: company?.id ?? entity.id }, select: { workflow: true } }),
  ]);

  const notes: string[] = [];
  let platforms = [...new Set(entity.platforms)];
  let platformsBasis: CollectionPlan["scope"]["platforms_basis"] = "entity";
  if (platforms.length === 0 && company && company.id !== entity.id && company.platforms.length > 0) {
    platforms = [...new Set(company.platforms)];
    platformsBasis = "company";
  }
  if (platforms.length === 0) {
    platformsBasis = "none";
    notes.push("No platform is saved for this entity or its company, so the plan has no tasks: save platforms on the entity first.");
  }

  const inputs = skills.map((s) => workflowOf(s).inputs);
  const lookbackDays = inputs.length > 0 ? Math.max(...inputs.map((i) => i.lookback_days)) : SKELETON_WORKFLOW.inputs.lookback_days;
  const maxSources = inputs.length > 0 ? Math.max(...inputs.map((i) => i.max_sources)) : SKELETON_WORKFLOW.inputs.max_sources;
  const now = new Date();
  const since = new Date(now.getTime() - lookbackDays * DAY_MS);
  const window = { since: since.toISOString(), until: now.toISOString() };

  const coverage = await latestRecords(db, entity.id, platforms);
  const tasks: PlanTask[] = platforms.flatMap((platform) =>
    plannedTargets(deps, entity, platform, since, notes).map((planned) => {
      const record = coverage.get(platform);
      const lastRun = lastRunOf(record, planned);
      return {
        task_id: `task-${shortHash(entity.id, planned.platform, planned.target_type, planned.target)}`,
        ...planned,
        window: { ...window, lookback_days: lookbackDays },
        last_coverage: record
          ? {
              coverage_state: record.coverageState,
              run_id: record.runId,
              collection_scope: record.collectionScope,
              query: record.query,
              started_at: record.startedAt,
              finished_at: record.finishedAt,
              recorded_at: record.updatedAt.toISOString(),
            }
          : null,
        last_run: lastRun,
        // Only a read of this very target that stopped before its end can be resumed.
        resume_cursor: lastRun && lastRun.reached_end !== true ? lastRun.cursor_end : null,
      };
    }),
  );

  const configuration = {
    entity: entity.id,
    name: entity.name,
    url: entity.url,
    keywords: entity.keywords,
    platforms,
    collection_targets: targetsOf(entity),
    lookback_days: lookbackDays,
    max_sources: maxSources,
  };
  return {
    entity_id: entity.id,
    configuration_id: `plan-${createHash("sha256").update(canonicalJson(configuration)).digest("hex").slice(0, 32)}`,
    subject: toRef(entity),
    company: company ? toRef(company) : null,
    products: related.filter((e) => e.kind === "product").map(toRef),
    competitors: related.filter((e) => e.kind === "competitor").map(toRef),
    scope: {
      keywords: entity.keywords,
      platforms,
      platforms_basis: platformsBasis,
      collection_targets: targetsOf(entity),
      lookback_days: lookbackDays,
      max_sources: maxSources,
      limits_basis: inputs.length > 0 ? "skills" : "default",
      window,
    },
    tasks,
    count: tasks.length,
    starts_collection: false,
    notes,
    generated_at: now.toISOString(),
  };
}
