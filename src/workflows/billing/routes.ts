import { z } from "zod";
import { isMember } from "../../access/workspaces/access.js";
import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { notFound } from "../../platform/errors.js";
import { defineRoute } from "../../platform/http/route.js";
import { pathId } from "../../platform/validation.js";
import { balance, ledgerEntries } from "./ledger.js";

const CreditsResponse = z.object({
  workspace_id: z.uuid(),
  balance: z.number().int(),
  entries: z.array(
    z.object({
      id: z.string(),
      kind: z.string(),
      amount: z.number().int(),
      run_id: z.string().nullable(),
      note: z.string().nullable(),
      created_at: z.string(),
    }),
  ),
});

export const creditRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "get",
    path: "/api/workspaces/:workspace_id/credits",
    summary: "A workspace's credit balance and its latest ledger entries",
    tags: ["credits"],
    auth: AUTH.full,
    role: "viewer",
    params: z.object({ workspace_id: pathId("Workspace") }),
    responses: { 200: { description: "Balance and entries", schema: CreditsResponse } },
    handler: async ({ params, auth }) => {
      if (!(await isMember(deps.db, callerId(auth), params.workspace_id))) throw notFound("Workspace");
      const [total, entries] = await Promise.all([balance(deps.db, params.workspace_id), ledgerEntries(deps.db, params.workspace_id)]);
      return {
        body: {
          workspace_id: params.workspace_id,
          balance: total,
          entries: entries.map((e) => ({
            id: e.id.toString(),
            kind: e.kind,
            amount: e.amount,
            run_id: e.runId,
            note: e.note,
            created_at: e.createdAt.toISOString(),
          })),
        },
      };
    },
  }),
];
