import { z } from "zod";
import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { withDefault } from "../../platform/validation.js";
import { createQuote } from "../billing/quotes.js";
import { EntityParams, ReplaceSkillsBody, SkillList, SkillParams } from "./schemas.js";
import { listSkills, replaceSkills } from "./service.js";

const tags = ["skills"];

const QuoteQuery = z.object({ source_mode: withDefault(z.enum(["saved", "refresh"]), "refresh") });
const QuoteResponse = z.object({
  quote_id: z.uuid(),
  skill_id: z.string(),
  entity_id: z.uuid(),
  source_mode: z.enum(["saved", "refresh"]),
  estimated_credits: z.number().int(),
  max_charge_credits: z.number().int(),
  scope_hash: z.string(),
  expires_at: z.string(),
  breakdown: z.record(z.string(), z.unknown()),
  run_url: z.string(),
});

export const skillRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "get",
    path: "/api/entities/:entity_id/skills",
    summary: "Discover the saved workflows (skills) of an entity",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: EntityParams,
    responses: { 200: { description: "Skills", schema: SkillList } },
    handler: async ({ params, auth }) => ({ body: await listSkills(deps.db, callerId(auth), params.entity_id) }),
  }),
  defineRoute({
    method: "put",
    path: "/api/entities/:entity_id/skills",
    summary: "Replace the entity's skills (at most five), checked against the set the caller last read",
    tags,
    auth: AUTH.full,
    role: "editor",
    params: EntityParams,
    body: ReplaceSkillsBody,
    responses: {
      200: { description: "The new set", schema: SkillList },
      409: { description: "The set changed since it was read (current ids and revisions in current_skills)" },
    },
    handler: async ({ params, body, auth }) => ({ body: await replaceSkills(deps.db, callerId(auth), params.entity_id, body) }),
  }),
  defineRoute({
    method: "get",
    path: "/api/entities/:entity_id/skills/:skill_id/quote",
    summary: "Price a run of a skill: estimate, approved maximum, scope_hash and expiry",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: SkillParams,
    query: QuoteQuery,
    responses: { 200: { description: "Quote", schema: QuoteResponse } },
    handler: async ({ params, query, auth }) => ({
      body: await createQuote(deps.db, callerId(auth), params.entity_id, params.skill_id, query.source_mode),
      headers: { "Cache-Control": "no-store" },
    }),
  }),
];
