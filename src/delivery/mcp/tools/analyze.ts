import { z } from "zod";
import { ANALYSIS_PLATFORMS, DEPTHS, type RunInput, SEARCH_MODES } from "../../../insights/analysis/schemas.js";
import type { CreateJobInput } from "../../../intake/collection/schemas.js";
import { REQUESTABLE_PLATFORMS } from "../../../intake/collection/schemas.js";
import { commandFromBody, createCollectionJob } from "../../../intake/collection/service.js";
import { callerId } from "../../../platform/auth.js";
import { parseInput } from "../../../platform/validation.js";
import { SOURCE_MODES } from "../../../workflows/routines/schemas.js";
import type { CreateRunInput } from "../../../workflows/runs/schemas.js";
import { RunHeaders } from "../../../workflows/runs/schemas.js";
import { createRun } from "../../../workflows/runs/service.js";
import { runAnalysis } from "../analysis-run.js";
import { argumentError, invoke, pick, requireString, ToolFailure } from "../invoke.js";
import type { Args, Mode, ToolDefinition } from "./types.js";

/**
 * `analyze`: an analysis streamed to its result, a durable research job and its status,
 * and one run of a saved skill. Argument names are the reference client's.
 */
const present = (value: unknown) => value !== undefined && value !== null;

const modes: Record<string, Mode> = {
  run: {
    summary:
      "analyse stored evidence and answer with the final result (answer, insights, verbatim evidence, coverage, limitations); progress arrives as MCP progress notifications when the call carries a progressToken. question; entity_id, project_id, content_ids (exactly these originals), search_mode, platforms, depth, request_id (8–128, the same id answers the same analysis)",
    routes: ["POST /agent/v1/analysis/run"],
    run: async (ctx, args) => {
      const contentIds = args.content_ids;
      // search_mode is passed only when given: absent, the route's default reads every stored platform.
      // (The reference client sends `knowledge` by default, which here means the team's own
      // conversations only: meeting notes and Slack.)
      const body = {
        ...pick(args, ["question", "project_id", "entity_id", "search_mode", "platforms", "depth", "request_id"]),
        ...(present(contentIds)
          ? { provided_sources: Array.isArray(contentIds) ? contentIds.map((content_id) => ({ content_id })) : contentIds }
          : {}),
      };
      const { body: terminal } = await invoke(ctx, {
        route: "POST /agent/v1/analysis/run",
        body,
        call: async ({ body: parsed, auth }) => ({
          body: await runAnalysis(ctx.services.deps, callerId(auth), parsed as RunInput, { signal: ctx.signal, progress: ctx.progress }),
        }),
      });
      const event = terminal as { event: string; data: Record<string, unknown> };
      if (event.event === "error") {
        // The route answered 200 and ended its stream with an `error` event; so does this call.
        throw new ToolFailure(200, { ...event.data, code: "analysis_failed", detail: String(event.data.detail ?? "The analysis failed.") });
      }
      return event.data;
    },
  },
  start: {
    summary:
      "start a durable research job for an entity: collection on the entity's platforms, then synthesis (question, entity_id; platforms, depth, request_id as its idempotency key); poll it with action status",
    routes: ["POST /agent/v1/ingest/research/jobs"],
    run: async (ctx, args) => {
      const question = requireString(args, "question", "the research question").trim();
      const body = {
        entity_id: args.entity_id,
        objective: question,
        questions: [question],
        platforms: args.platforms ?? null,
        depth: args.depth ?? "brief",
        ...(present(args.request_id) ? { idempotency_key: args.request_id } : {}),
      };
      const { body: job } = await invoke(ctx, {
        route: "POST /agent/v1/ingest/research/jobs",
        body,
        // The route's handler reads the raw request to refuse collection_only, which this call never sends.
        call: async ({ body: parsed, auth }) => ({
          body: await createCollectionJob(ctx.services.deps, callerId(auth), commandFromBody(parsed as CreateJobInput, "research")),
        }),
      });
      return job as Record<string, unknown>;
    },
  },
  status: {
    summary: "a research job's status, per-platform coverage and counts, and its analysis_id (job_id)",
    routes: ["GET /agent/v1/ingest/research/jobs/:job_id"],
    run: async (ctx, args) => {
      const jobId = requireString(args, "job_id", "the job_id that action start answered");
      const { body } = await invoke(ctx, { route: "GET /agent/v1/ingest/research/jobs/:job_id", params: { job_id: jobId } });
      return body as Record<string, unknown>;
    },
  },
  skill: {
    summary:
      "run a saved skill once (entity_id, skill_id, request_id as the idempotency key). Without scope_hash and max_charge_credits it runs nothing and answers a priced quote (source_mode saved by default, or refresh); call again with the quote's scope_hash and an approved max_charge_credits to start the run",
    routes: ["GET /api/entities/:entity_id/skills/:skill_id/quote", "POST /api/entities/:entity_id/skills/:skill_id/runs"],
    run: async (ctx, args) => {
      const params = {
        entity_id: requireString(args, "entity_id", "the skill's entity"),
        skill_id: requireString(args, "skill_id", "the saved skill to run (read them with recall mode skills)"),
      };
      const requestId = requireString(args, "request_id", "8–128 characters; reuse it to retry the same run");
      for (const field of ["question", "content_ids", "search_mode", "platforms", "depth"]) {
        if (present(args[field])) {
          throw argumentError(
            [field],
            "A saved skill runs its saved question and sources; leave out question and collection settings",
            "extra_forbidden",
          );
        }
      }
      if (!present(args.scope_hash) && !present(args.max_charge_credits)) {
        const { body: quote } = await invoke(ctx, {
          route: "GET /api/entities/:entity_id/skills/:skill_id/quote",
          params,
          query: { source_mode: args.source_mode ?? "saved" },
        });
        const offer = quote as { scope_hash: string; max_charge_credits: number; estimated_credits: number };
        return {
          status: "approval_required",
          detail: `Nothing ran. A run of this skill is estimated at ${offer.estimated_credits} credits and charged at most the approved maximum; to start it, call analyze again with the same arguments plus scope_hash and max_charge_credits (between the estimate and ${offer.max_charge_credits}).`,
          quote,
          next: {
            action: "skill",
            ...params,
            request_id: requestId,
            scope_hash: offer.scope_hash,
            max_charge_credits: offer.max_charge_credits,
          },
        };
      }
      const { body } = await invoke(ctx, {
        route: "POST /api/entities/:entity_id/skills/:skill_id/runs",
        params,
        body: pick(args, ["scope_hash", "max_charge_credits"]),
        // The route reads its idempotency key from the Idempotency-Key header; here it is request_id.
        call: async ({ params: parsed, body: run, auth }) => {
          const { entity_id, skill_id } = parsed as { entity_id: string; skill_id: string };
          const headers = parseInput(RunHeaders, { "idempotency-key": requestId }, "header");
          const result = await createRun(
            ctx.services.deps,
            callerId(auth),
            { entityId: entity_id, skillId: skill_id, idempotencyKey: headers["idempotency-key"] },
            run as CreateRunInput,
          );
          // `replayed` stands for the route's Idempotent-Replayed header.
          return { status: result.status, body: { ...result.body, replayed: result.replayed } };
        },
      });
      return body as Record<string, unknown>;
    },
  },
};

const text = z.string();

export const AnalyzeArgs = z.looseObject({
  action: z
    .enum(Object.keys(modes) as [string, ...string[]])
    .nullish()
    .describe("run (default), start, status or skill"),
  question: text.nullish().describe("run and start: the research question"),
  entity_id: text.nullish().describe("Entity UUID: scopes run; required for start and skill"),
  project_id: text.nullish().describe("run: Project UUID"),
  content_ids: z.array(text).nullish().describe("run: analyse exactly these stored originals"),
  search_mode: z
    .enum(SEARCH_MODES)
    .nullish()
    .describe(
      "run: multi_source (default: every stored platform), web_only (public platforms), user_only (agent, claude_code, codex), knowledge (meeting notes and Slack), user_first",
    ),
  platforms: z
    .array(text)
    .nullish()
    .describe(`run: ${ANALYSIS_PLATFORMS.join(", ")}; start: ${REQUESTABLE_PLATFORMS.join(", ")} (default: the entity's platforms)`),
  depth: z.enum(DEPTHS).nullish().describe("run and start: brief (default) or deep"),
  request_id: text.nullish().describe("8–128 characters: run's and start's idempotency key; required for skill"),
  job_id: text.nullish().describe("status: the research job's id"),
  skill_id: text.nullish().describe("skill: the saved skill's id"),
  source_mode: z.enum(SOURCE_MODES).nullish().describe("skill: saved (default) analyses stored originals; refresh collects first"),
  scope_hash: text.nullish().describe("skill: the quote's scope_hash, approving the run"),
  max_charge_credits: z.number().int().nullish().describe("skill: the approved maximum charge, from the quote"),
});

export const analyzeTool: ToolDefinition = {
  name: "analyze",
  title: "Analyze",
  intro:
    "Research questions from stored evidence: an analysis whose every quote is verbatim from a stored original, a durable research job, or a saved skill's run.",
  selector: "action",
  defaultMode: (_args: Args) => "run",
  modes,
  inputSchema: AnalyzeArgs,
};
