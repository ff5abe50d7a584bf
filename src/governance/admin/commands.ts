import { isUuid } from "../../access/workspaces/access.js";
import { requeueWebhookDeliveries } from "../../delivery/webhooks/requeue.js";
import { queueReanalysis } from "../../insights/enrichment/reanalyse.js";
import { requeueJob, requeueStalled } from "../../intake/collection/requeue.js";
import { requeueUnenriched } from "../../intake/ingest/requeue.js";
import { requeueLost } from "../../jobs/requeue.js";
import type { AppDeps } from "../../platform/deps.js";
import { whenReady } from "../../platform/redis.js";
import { grantCredits } from "../../workflows/billing/ledger.js";

/**
 * Operator commands. Each takes plain arguments and answers one line of text, so the
 * same functions serve the CLI (`npm run admin`) and the tests. A command that names a
 * subject (an account, a workspace, an entity, a job) refuses one that does not exist
 * rather than reporting success for nothing.
 */
type Command = {
  usage: string;
  summary: string;
  run: (deps: AppDeps, args: string[]) => Promise<string>;
  /** The command reads or writes the job queue: it waits for Redis first. */
  queue?: boolean;
};

/** How long a queue command waits for its Redis connection before judging Redis unavailable. */
export const QUEUE_READY_TIMEOUT_MS = 5000;

/** A refused command: `exitCode` 2 for wrong usage, 1 for a subject that does not exist. */
export class AdminCommandError extends Error {
  override name = "AdminCommandError";
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

const usageError = (usage: string) => new AdminCommandError(`usage: npm run admin -- ${usage}`, 2);

const noUser = (sub: string) =>
  new AdminCommandError(
    `no account with sub '${sub}': an account exists once its user has made one request with a bearer token (e.g. GET /agent/v1/connection); nothing was changed`,
  );

async function setRawExport(deps: AppDeps, sub: string | undefined, enabled: boolean): Promise<string> {
  if (!sub) throw usageError(`${enabled ? "enable" : "disable"}-raw-export <sub>`);
  const { count } = await deps.db.user.updateMany({ where: { sub }, data: { rawExportEnabled: enabled } });
  if (count === 0) throw noUser(sub);
  return `raw export ${enabled ? "enabled" : "disabled"} for ${sub}`;
}

async function setInternalAgent(deps: AppDeps, sub: string | undefined, enabled: boolean): Promise<string> {
  if (!sub) throw usageError(`${enabled ? "mark" : "unmark"}-internal-agent <sub>`);
  const { count } = await deps.db.user.updateMany({ where: { sub }, data: { isInternalAgent: enabled } });
  if (count === 0) throw noUser(sub);
  return `${sub} is ${enabled ? "now" : "no longer"} an internal agent`;
}

async function grant(deps: AppDeps, [workspaceId, amountText, ...note]: string[]): Promise<string> {
  const amount = Number(amountText);
  if (!workspaceId || !isUuid(workspaceId) || !Number.isInteger(amount) || amount <= 0) {
    throw usageError("grant-credits <workspace_id> <positive whole amount> [note]");
  }
  const workspace = await deps.db.workspace.findUnique({ where: { id: workspaceId } });
  if (!workspace) throw new AdminCommandError(`workspace ${workspaceId} does not exist; nothing was granted`);
  const total = await grantCredits(deps.db, workspaceId, amount, note.length > 0 ? note.join(" ") : undefined);
  return `granted ${amount} credits to ${workspaceId}; balance ${total}`;
}

async function requeueOneJob(deps: AppDeps, [id]: string[]): Promise<string> {
  if (!id) throw usageError("requeue-job <collection_job_id>");
  const exists = isUuid(id) && (await deps.db.collectionJob.count({ where: { id } })) > 0;
  if (!exists) throw new AdminCommandError(`no collection job ${id}; nothing was requeued`);
  return requeueJob(deps, id);
}

/** A command over the stored rows of one entity, or of all: refuses an argument that names no entity. */
function perEntity(usage: string, run: (deps: AppDeps, entityId?: string) => Promise<string>) {
  return async (deps: AppDeps, [entityId]: string[]): Promise<string> => {
    if (entityId !== undefined) {
      if (!isUuid(entityId)) throw usageError(usage);
      if ((await deps.db.entity.count({ where: { id: entityId } })) === 0) {
        throw new AdminCommandError(`no entity ${entityId}; nothing was queued`);
      }
    }
    return run(deps, entityId);
  };
}

export const adminCommands: Record<string, Command> = {
  help: { usage: "help", summary: "list these commands", run: async () => adminHelp() },
  "enable-raw-export": {
    usage: "enable-raw-export <sub>",
    summary: "open raw export (export table, completeness audit) to an existing account",
    run: (d, [sub]) => setRawExport(d, sub, true),
  },
  "disable-raw-export": {
    usage: "disable-raw-export <sub>",
    summary: "close raw export for an account",
    run: (d, [sub]) => setRawExport(d, sub, false),
  },
  "mark-internal-agent": {
    usage: "mark-internal-agent <sub>",
    summary: "let an account export without raw-export enablement",
    run: (d, [sub]) => setInternalAgent(d, sub, true),
  },
  "unmark-internal-agent": {
    usage: "unmark-internal-agent <sub>",
    summary: "make an internal agent an ordinary account again",
    run: (d, [sub]) => setInternalAgent(d, sub, false),
  },
  "grant-credits": {
    usage: "grant-credits <workspace_id> <amount> [note]",
    summary: "add credits to a workspace's ledger (workflow runs need them)",
    run: grant,
  },
  "requeue-enrichment": {
    queue: true,
    usage: "requeue-enrichment [entity_id]",
    summary: "queue enrichment again for stored rows (of one entity) that have none",
    run: perEntity("requeue-enrichment [entity_id]", requeueUnenriched),
  },
  reanalyse: {
    queue: true,
    usage: "reanalyse [entity_id]",
    summary: "after a deploy that changed the analyser: queue stored rows (of one entity) whose units are older",
    run: perEntity("reanalyse [entity_id]", queueReanalysis),
  },
  "requeue-stalled": {
    queue: true,
    usage: "requeue-stalled [older_than_seconds]",
    summary: "re-enqueue collection jobs whose queue entry is gone",
    run: (d, [age]) => requeueStalled(d, { olderThanSeconds: age === undefined ? 0 : Math.max(0, Number(age) || 0) }),
  },
  "requeue-lost": {
    queue: true,
    usage: "requeue-lost [older_than_seconds]",
    summary: "after a Redis loss: re-enqueue every kind of job whose row is queued or running but whose queue entry is gone",
    run: (d, [age]) => requeueLost(d, { olderThanSeconds: age === undefined ? 0 : Math.max(0, Number(age) || 0) }),
  },
  "requeue-job": {
    queue: true,
    usage: "requeue-job <collection_job_id>",
    summary: "re-enqueue a queued or running collection job whose queue entry is gone, or retry a failed one as a new job",
    run: requeueOneJob,
  },
  "requeue-webhooks": {
    queue: true,
    usage: "requeue-webhooks [older_than_seconds]",
    summary: "queue again every open webhook delivery (pending or retrying) whose queue entry is gone",
    run: (d, [age]) => requeueWebhookDeliveries(d, { olderThanSeconds: age === undefined ? 0 : Math.max(0, Number(age) || 0) }),
  },
};

const HELP_WORDS = new Set(["help", "--help", "-h"]);

/** True when the arguments ask for the list of commands. */
export const wantsHelp = (argv: string[]) => argv[0] !== undefined && HELP_WORDS.has(argv[0]);

/** Every command with its arguments and what it does. */
export function adminHelp(): string {
  const width = Math.max(...Object.values(adminCommands).map((c) => c.usage.length));
  const lines = Object.values(adminCommands).map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`);
  return `usage: npm run admin -- <command> [arguments]\n\ncommands:\n${lines.join("\n")}`;
}

export async function runAdminCommand(deps: AppDeps, argv: string[]): Promise<string> {
  if (wantsHelp(argv)) return adminHelp();
  const [name, ...args] = argv;
  const command = name ? adminCommands[name] : undefined;
  if (!command) throw new AdminCommandError(`${name ? `unknown command '${name}'\n` : ""}${adminHelp()}`, 2);
  // A process that has just started has not connected yet: waiting is not the same as Redis being down.
  if (command.queue && !(await whenReady(deps.queues.connection, QUEUE_READY_TIMEOUT_MS))) {
    throw new AdminCommandError(`the job queue (Redis) did not answer within ${QUEUE_READY_TIMEOUT_MS / 1000} s; nothing was changed`);
  }
  return command.run(deps, args);
}
