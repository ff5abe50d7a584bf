import { createHash } from "node:crypto";
import { z } from "zod";
import { EvidenceInput } from "../../../insights/knowledge/schemas.js";
import { CoverageInputSchema } from "../../../intake/coverage/schemas.js";
import { IngestRequestBody } from "../../../intake/ingest/schemas.js";
import { SubmitObservationsBody } from "../../../intake/observations/schemas.js";
import { RoutineBody } from "../../../workflows/routines/schemas.js";
import { ReplaceSkillsBody } from "../../../workflows/skills/schemas.js";
import { argumentError, type CallContext, invoke, type Operation, pick, requireString } from "../invoke.js";
import type { Args, Mode, ToolDefinition } from "./types.js";

/**
 * `ingest`: writes. Each destination is one write of the HTTP API (evidence is two: the
 * original is stored, then an evidence capture run enriches it, as the reference client does).
 */
const write = async (ctx: CallContext, op: Operation) => (await invoke(ctx, op)).body as Record<string, unknown>;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const modes: Record<string, Mode> = {
  context: {
    summary: "save a curated page of the caller at a stable path, creating or replacing it (title, content; path, tags, project_id)",
    routes: ["POST /agent/v1/context/save"],
    run: async (ctx, args) => ({
      ingested: true,
      ...(await write(ctx, { route: "POST /agent/v1/context/save", body: pick(args, ["title", "content", "path", "tags", "project_id"]) })),
    }),
  },
  sources: {
    summary:
      "store a batch of original sources with their comments for an entity, all or nothing; starts no analysis (entity_id, sources; collection_run_id, collection_scope, coverage_state)",
    routes: ["POST /agent/v1/ingest/content"],
    run: (ctx, args) =>
      write(ctx, {
        route: "POST /agent/v1/ingest/content",
        body: pick(args, ["entity_id", "sources", "collection_run_id", "collection_scope", "coverage_state"]),
      }),
  },
  coverage: {
    summary: "record what a collection attempted and whether it proved coverage, blocked channels included (entity_id, coverage)",
    routes: ["POST /agent/v1/ingest/coverage"],
    run: (ctx, args) => {
      if (!isObject(args.coverage)) throw argumentError(["coverage"], "Input should be a valid object: the coverage record", "model_type");
      return write(ctx, { route: "POST /agent/v1/ingest/coverage", body: { ...args.coverage, entity_id: args.entity_id } });
    },
  },
  evidence: {
    summary:
      "store one approved record (a workflow trace, meeting note, decision) as an original of the entity and enrich it (entity_id, title, content; source_platform, source_url, author, published_at, metadata, tags, project_id)",
    routes: ["POST /agent/v1/ingest/content", "POST /api/sweeps/run"],
    run: async (ctx, args) => {
      const entityId = requireString(args, "entity_id", "evidence is an entity's");
      const title = requireString(args, "title", "the evidence's title");
      const content = requireString(args, "content", "the evidence's text");
      const platform = typeof args.source_platform === "string" && args.source_platform ? args.source_platform : "agent";
      const sourceUrl = typeof args.source_url === "string" ? args.source_url : "";
      // The same evidence sent again names the same collection run and capture key, so a retry repeats nothing.
      const collectionRunId = `mcp-evidence-${createHash("sha256")
        .update([entityId, platform, sourceUrl, title, content].join("\u001f"))
        .digest("hex")
        .slice(0, 24)}`;
      const metadata = {
        ...(isObject(args.metadata) ? args.metadata : {}),
        tags: args.tags ?? [],
        project_id: args.project_id ?? null,
        ingestion_contract: "mcp",
      };
      const ingest = await write(ctx, {
        route: "POST /agent/v1/ingest/content",
        body: {
          entity_id: entityId,
          sources: [
            { title, content, platform, url: sourceUrl, author: args.author ?? "", published_at: args.published_at ?? null, metadata },
          ],
          collection_run_id: collectionRunId,
          collection_scope: "agent_approved",
          coverage_state: "bounded",
        },
      });
      const enrichment = await write(ctx, {
        route: "POST /api/sweeps/run",
        body: { entity_id: entityId, idempotency_key: collectionRunId },
      });
      return {
        ingested: true,
        destination: "evidence",
        entity_id: entityId,
        source_platform: platform,
        collection_run_id: collectionRunId,
        ingest,
        enrichment,
      };
    },
  },
  insight: {
    summary:
      "save a knowledge record whose every quote is checked verbatim against its source: create (expected_revision 0) or, with insight_id, revise (the revision last read). entity_id or project_id, request_id, title, summary, evidence; reasoning, limitations, tags, client_label",
    routes: ["POST /agent/v1/knowledge/insights", "PUT /agent/v1/knowledge/insights/:insight_id"],
    run: (ctx, args) => {
      const body = pick(args, [
        "entity_id",
        "project_id",
        "request_id",
        "expected_revision",
        "title",
        "summary",
        "reasoning",
        "limitations",
        "tags",
        "evidence",
        "client_label",
      ]);
      return args.insight_id !== undefined && args.insight_id !== null
        ? write(ctx, { route: "PUT /agent/v1/knowledge/insights/:insight_id", params: { insight_id: args.insight_id }, body })
        : write(ctx, { route: "POST /agent/v1/knowledge/insights", body });
    },
  },
  skills: {
    summary: "replace an entity's saved skills (at most five) against the set last read; runs nothing (entity_id, skills, expected_skills)",
    routes: ["PUT /api/entities/:entity_id/skills"],
    run: (ctx, args) =>
      write(ctx, {
        route: "PUT /api/entities/:entity_id/skills",
        params: { entity_id: requireString(args, "entity_id", "skills are an entity's") },
        body: pick(args, ["skills", "expected_skills"]),
      }),
  },
  routine: {
    summary:
      "create, change or pause a skill's routine; enabling authorises a paid run every 24 or 168 hours up to max_charge_cents each (entity_id, skill_id, routine)",
    routes: ["PUT /api/entities/:entity_id/skills/:skill_id/routine"],
    run: (ctx, args) => {
      const params = {
        entity_id: requireString(args, "entity_id", "the skill's entity"),
        skill_id: requireString(args, "skill_id", "the skill the routine runs"),
      };
      if (!isObject(args.routine)) throw argumentError(["routine"], "Input should be a valid object: the routine settings", "model_type");
      return write(ctx, {
        route: "PUT /api/entities/:entity_id/skills/:skill_id/routine",
        params,
        body: pick(args.routine, ["enabled", "interval_hours", "source_mode", "max_charge_cents", "expected_revision"]),
      });
    },
  },
  observations: {
    summary:
      "save 1–50 feedback snapshots as originals (observations; project_id, entity_id as the items' default); an identical retry answers the same ids. The default destination when observations are given",
    routes: ["POST /api/observations/submit"],
    run: (ctx, args) =>
      write(ctx, { route: "POST /api/observations/submit", body: pick(args, ["observations", "project_id", "entity_id"]) }),
  },
  execution: {
    summary:
      "record an approved handoff of an action (action_id, executor_platform, approved_for_execution: true, steps), or with execution_id report on it or review it (execution_status, step_results, outcome_summary, metrics; an owner or admin: review_status, training_scopes)",
    routes: ["POST /api/sweeps/objects/:object_id/executions", "PATCH /api/sweeps/executions/:execution_id"],
    run: async (ctx, args) => {
      // The reference client's answer: the execution in a wrapper naming what was done.
      if (args.execution_id !== undefined && args.execution_id !== null) {
        const executionId = requireString(args, "execution_id", "the execution to update");
        const body = {
          ...pick(args, ["step_results", "outcome_summary", "metrics", "review_status", "training_scopes"]),
          ...(args.execution_status !== undefined ? { status: args.execution_status } : {}),
        };
        const execution = await write(ctx, {
          route: "PATCH /api/sweeps/executions/:execution_id",
          params: { execution_id: executionId },
          body,
        });
        return { recorded: true, destination: "execution", operation: "updated", execution_id: executionId, execution };
      }
      const actionId = requireString(args, "action_id", "the action an execution is created for (or give execution_id to update one)");
      const execution = await write(ctx, {
        route: "POST /api/sweeps/objects/:object_id/executions",
        params: { object_id: actionId },
        body: pick(args, ["executor_platform", "approved_for_execution", "steps"]),
      });
      return { recorded: true, destination: "execution", operation: "created", action_id: actionId, execution };
    },
  },
};

const text = z.string();

export const IngestArgs = z.looseObject({
  destination: z
    .enum(Object.keys(modes) as [string, ...string[]])
    .nullish()
    .describe("Where to write. Default: observations when observations are given, else context"),
  title: text.nullish().describe("context, evidence and insight: the title"),
  content: text.nullish().describe("context and evidence: the text (Markdown for context)"),
  path: text.nullish().describe("context: the page's path (derived from the title when absent)"),
  tags: z.array(text).nullish().describe("context, evidence and insight: tags"),
  project_id: text.nullish().describe("Project UUID"),
  entity_id: text.nullish().describe("Entity UUID"),
  sources: IngestRequestBody.shape.sources.nullish().describe("sources: originals with their comments"),
  collection_run_id: IngestRequestBody.shape.collection_run_id.describe("sources: the collection attempt's stable id"),
  collection_scope: IngestRequestBody.shape.collection_scope.describe("sources: the declared scope"),
  coverage_state: IngestRequestBody.shape.coverage_state.describe("sources: exhaustive, sampled, bounded, blocked or unknown"),
  coverage: CoverageInputSchema.nullish().describe("coverage: the record (entity_id is the top-level argument)"),
  source_platform: text.nullish().describe("evidence: the origin (default agent)"),
  source_url: text.nullish().describe("evidence: the original's URL or a stable trace URI"),
  author: text.nullish().describe("evidence: author, participant or executor"),
  published_at: text.nullish().describe("evidence: ISO 8601 time of the original"),
  metadata: z.record(z.string(), z.unknown()).nullish().describe("evidence: provenance"),
  insight_id: text.nullish().describe("insight: revise this record; omit to create"),
  request_id: text.nullish().describe("insight: idempotency key (8–128); reuse it unchanged on retry"),
  expected_revision: z.number().int().min(0).nullish().describe("insight: 0 to create, else the revision last read"),
  summary: text.nullish().describe("insight: the finding"),
  reasoning: text.nullish().describe("insight: how the evidence supports it"),
  limitations: z.array(text).nullish().describe("insight: what it does not show"),
  client_label: text.nullish().describe("insight: a self-reported client label"),
  evidence: z.array(EvidenceInput).nullish().describe("insight: 1–20 verbatim quotes of the entity's or project's originals"),
  skills: ReplaceSkillsBody.shape.skills.nullish().describe("skills: the complete desired list"),
  expected_skills: ReplaceSkillsBody.shape.expected_skills
    .nullish()
    .describe("skills: the list last read (definitions with their ids, or {id, revision})"),
  skill_id: text.nullish().describe("routine: the skill it runs"),
  routine: RoutineBody.nullish().describe("routine: the settings; expected_revision 0 creates it"),
  observations: SubmitObservationsBody.shape.observations.nullish().describe("observations: 1–50 snapshots"),
});

export const ingestTool: ToolDefinition = {
  name: "ingest",
  title: "Ingest",
  intro:
    "Write to this service: curated pages, original sources and coverage, approved evidence, knowledge records, skills and routines, feedback observations.",
  selector: "destination",
  defaultMode: (args: Args) => (Array.isArray(args.observations) ? "observations" : "context"),
  modes,
  inputSchema: IngestArgs,
};
