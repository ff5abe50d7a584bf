import type { z } from "zod";
import type { AuthContext, AuthRule } from "../platform/auth.js";
import { defineRoute, type ResponseSpec } from "../platform/http/route.js";

/**
 * The cancel route has one shape for every job kind: `POST <the job's URL>/cancel`, no body,
 * answered with the job's usual representation. This is the text each one documents.
 */
export const CANCEL_DESCRIPTION = [
  "Cancels the job. A queued job is removed from the queue; a running one stops at its next checkpoint",
  "(between pages, platforms, notes or steps), within about 2 seconds, and ends `cancelled`. What it stored",
  "before the cancel is kept. Cancelling a cancelled job answers the same again; cancelling a job that",
  "ended otherwise is a 409 `conflict` whose `status` names how it ended. Subscribers of the workspace's",
  "webhooks receive `<kind>.cancelled`.",
].join(" ");

/** The cancel route of one job kind, in the shape every kind shares. */
export function cancelRoute<P extends z.ZodType>(spec: {
  path: string;
  summary: string;
  tags: string[];
  auth: AuthRule;
  params: P;
  /** The job's usual representation, answered after the cancel. */
  schema: z.ZodType;
  /** "The collection job", "The run", ... */
  what: string;
  responses?: Record<number, ResponseSpec>;
  cancel: (params: z.output<P>, auth: AuthContext | undefined) => Promise<unknown>;
}) {
  return defineRoute({
    method: "post",
    path: spec.path,
    summary: spec.summary,
    description: CANCEL_DESCRIPTION,
    tags: spec.tags,
    auth: spec.auth,
    // Cancelling is a write: editors and above, whoever started the job.
    role: "editor",
    params: spec.params,
    responses: {
      200: { description: `${spec.what}, now cancelled (a repeated cancel answers the same)`, schema: spec.schema },
      404: { description: `${spec.what} is unknown, or not visible to the caller` },
      409: { description: `${spec.what} already ended; \`status\` names how (conflict)` },
      ...spec.responses,
    },
    handler: async ({ params, auth }) => ({ body: await spec.cancel(params, auth) }),
  });
}
