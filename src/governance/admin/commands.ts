import { requeueWebhookDeliveries } from "../../delivery/webhooks/requeue.js";
import { queueReembed, reembedStatus, stopReembed } from "../../insights/embed/reembed-command.js";
import { queueReanalysis } from "../../insights/enrichment/reanalyse.js";
import { requeueJob, requeueStalled } from "../../intake/collection/requeue.js";
import { requeueUnenriched } from "../../intake/ingest/requeue.js";
import { requeueLost } from "../../jobs/requeue.js";
import type { AppDeps } from "../../platform/deps.js";
import { whenReady } from "../../platform/redis.js";
import { grantCredits } from "../../workflows/billing/ledger.js";
import { type ArgSpec, type ArgValues, parseArgs, UsageError, usageOf } from "./args.js";

/**
 * Operator commands. Each declares its arguments, which one parser checks (src/governance/admin/args.ts)
 * before anything runs, and answers one line of text, so the same functions serve the CLI (`npm run
 * admin`) and the tests. `--help` or `-h` after a command prints its usage and does nothing; a
 * malformed argument is a usage error (exit 2). A command that names a subject (an account, a
 * workspace, an entity, a job) refuses one that does not exist, and a command refused for what its
 * subject is (a job whose state is final) says why: exit 1, rather than reporting success for nothing.
 */
type Command = {
  args: readonly ArgSpec[];
  summary: string;
  run: (deps: AppDeps, args: ArgValues) => Promise<string>;
  /** The command reads or writes the job queue: it waits for Redis first. */
  queue?: boolean;
};

/** How long a queue command waits for its Redis connection before judging Redis unavailable. */
export const QUEUE_READY_TIMEOUT_MS = 5000;

/** A refused command: `exitCode` 2 for wrong usage, 1 for a subject that does not exist or may not be acted on. */
export class AdminCommandError extends Error {
  override name = "AdminCommandError";
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

const noUser = (sub: string) =>
  new AdminCommandError(
    `no account with sub '${sub}': an account exists once its user has made one request with a bearer token (e.g. GET /agent/v1/connection); nothing was changed`,
  );

const text = (args: ArgValues, name: string) => args[name] as string;
const optionalText = (args: ArgValues, name: string) => args[name] as string | undefined;
const seconds = (args: ArgValues) => (args.older_than_seconds as number | undefined) ?? 0;

async function setRawExport(deps: AppDeps, sub: string, enabled: boolean): Promise<string> {
  const { count } = await deps.db.user.updateMany({ where: { sub }, data: { rawExportEnabled: enabled } });
  if (count === 0) throw noUser(sub);
  return `raw export ${enabled ? "enabled" : "disabled"} for ${sub}`;
}

async function setInternalAgent(deps: AppDeps, sub: string, enabled: boolean): Promise<string> {
  const { count } = await deps.db.user.updateMany({ where: { sub }, data: { isInternalAgent: enabled } });
  if (count === 0) throw noUser(sub);
  return `${sub} is ${enabled ? "now" : "no longer"} an internal agent`;
}

async function grant(deps: AppDeps, args: ArgValues): Promise<string> {
  const workspaceId = text(args, "workspace_id");
  const amount = args.amount as number;
  const note = optionalText(args, "note");
  const workspace = await deps.db.workspace.findUnique({ where: { id: workspaceId } });
  if (!workspace) throw new AdminCommandError(`workspace ${workspaceId} does not exist; nothing was granted`);
  const total = await grantCredits(deps.db, workspaceId, amount, note);
  return `granted ${amount} credits to ${workspaceId}; balance ${total}`;
}

async function requeueOneJob(deps: AppDeps, args: ArgValues): Promise<string> {
  const id = text(args, "collection_job_id");
  if ((await deps.db.collectionJob.count({ where: { id } })) === 0)
    throw new AdminCommandError(`no collection job ${id}; nothing was requeued`);
  const outcome = await requeueJob(deps, id);
  // A job whose state is final, or one the queue still holds, is refused: nothing was requeued.
  if (!outcome.done) throw new AdminCommandError(outcome.message);
  return outcome.message;
}

/** A command over the stored rows of one entity, or of all: refuses an entity that does not exist. */
function perEntity(run: (deps: AppDeps, entityId?: string) => Promise<string>) {
  return async (deps: AppDeps, args: ArgValues): Promise<string> => {
    const entityId = optionalText(args, "entity_id");
    if (entityId !== undefined && (await deps.db.entity.count({ where: { id: entityId } })) === 0) {
      throw new AdminCommandError(`no entity ${entityId}; nothing was queued`);
    }
    return run(deps, entityId);
  };
}

const SUB: readonly ArgSpec[] = [{ name: "sub", kind: "text" }];
const AGE: readonly ArgSpec[] = [{ name: "older_than_seconds", kind: "seconds", optional: true }];
const ENTITY: readonly ArgSpec[] = [{ name: "entity_id", kind: "uuid", optional: true }];

export const adminCommands: Record<string, Command & { usage: string }> = withUsage({
  // Answered by the parser, before anything connects (parseAdminCommand).
  help: {
    args: [{ name: "command", kind: "text", optional: true }],
    summary: "list these commands, or one command's usage",
    run: async (_deps, args) => helpFor(optionalText(args, "command")),
  },
  "enable-raw-export": {
    args: SUB,
    summary: "open raw export (export table, completeness audit) to an existing account",
    run: (d, args) => setRawExport(d, text(args, "sub"), true),
  },
  "disable-raw-export": {
    args: SUB,
    summary: "close raw export for an account",
    run: (d, args) => setRawExport(d, text(args, "sub"), false),
  },
  "mark-internal-agent": {
    args: SUB,
    summary: "let an account export without raw-export enablement",
    run: (d, args) => setInternalAgent(d, text(args, "sub"), true),
  },
  "unmark-internal-agent": {
    args: SUB,
    summary: "make an internal agent an ordinary account again",
    run: (d, args) => setInternalAgent(d, text(args, "sub"), false),
  },
  "grant-credits": {
    args: [
      { name: "workspace_id", kind: "uuid" },
      { name: "amount", kind: "amount" },
      { name: "note", kind: "rest" },
    ],
    summary: "add credits to a workspace's ledger (workflow runs need them)",
    run: grant,
  },
  "requeue-enrichment": {
    queue: true,
    args: ENTITY,
    summary: "queue enrichment again for stored rows (of one entity) that have none",
    run: perEntity(requeueUnenriched),
  },
  reanalyse: {
    queue: true,
    args: ENTITY,
    summary: "after a deploy that changed the analyser: queue stored rows (of one entity) whose units are older",
    run: perEntity(queueReanalysis),
  },
  reembed: {
    queue: true,
    args: [],
    summary:
      "after the embedding model changed: re-embed, in the background, stored vectors of another model (resumes where a stopped run left off)",
    run: (d) => queueReembed(d),
  },
  "reembed-status": {
    queue: true,
    args: [],
    summary: "how many stored vectors are of the current models and how many are left, and whether re-embedding runs",
    run: (d) => reembedStatus(d),
  },
  "reembed-stop": {
    queue: true,
    args: [],
    summary: "stop re-embedding after its current chunk (nothing done is lost; reembed resumes)",
    run: (d) => stopReembed(d),
  },
  "requeue-stalled": {
    queue: true,
    args: AGE,
    summary: "re-enqueue collection jobs whose queue entry is gone",
    run: (d, args) => requeueStalled(d, { olderThanSeconds: seconds(args) }),
  },
  "requeue-lost": {
    queue: true,
    args: AGE,
    summary: "after a Redis loss: re-enqueue every kind of job whose row is queued or running but whose queue entry is gone",
    run: (d, args) => requeueLost(d, { olderThanSeconds: seconds(args) }),
  },
  "requeue-job": {
    queue: true,
    args: [{ name: "collection_job_id", kind: "uuid" }],
    summary: "re-enqueue a queued or running collection job whose queue entry is gone, or retry a failed one as a new job",
    run: requeueOneJob,
  },
  "requeue-webhooks": {
    queue: true,
    args: AGE,
    summary: "queue again every open webhook delivery (pending or retrying) whose queue entry is gone",
    run: (d, args) => requeueWebhookDeliveries(d, { olderThanSeconds: seconds(args) }),
  },
});

function withUsage(commands: Record<string, Command>): Record<string, Command & { usage: string }> {
  return Object.fromEntries(Object.entries(commands).map(([name, c]) => [name, { ...c, usage: usageOf(name, c.args) }]));
}

/** Every command with its arguments and what it does. */
export function adminHelp(): string {
  const width = Math.max(...Object.values(adminCommands).map((c) => c.usage.length));
  const lines = Object.values(adminCommands).map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`);
  return `usage: npm run admin -- <command> [arguments]\n\ncommands:\n${lines.join("\n")}\n\n--help or -h after a command prints its usage.`;
}

/** One command's usage and what it does. */
function commandHelp(command: Command & { usage: string }): string {
  return `usage: npm run admin -- ${command.usage}\n\n${command.summary}`;
}

const helpFor = (name: string | undefined) => (name === undefined ? adminHelp() : commandHelp(known(name)));

function known(name: string): Command & { usage: string } {
  const command = Object.hasOwn(adminCommands, name) ? adminCommands[name] : undefined;
  if (!command) throw new AdminCommandError(`unknown command '${name}'\n${adminHelp()}`, 2);
  return command;
}

/** What the arguments ask for, checked before anything connects: help to print, or a command to run with its arguments. */
export type AdminRequest = { help: string } | { command: Command & { usage: string }; args: ArgValues };

/** Parses a command line: throws an AdminCommandError with exit code 2 (and the usage) for wrong usage. */
export function parseAdminCommand(argv: string[]): AdminRequest {
  const [name, ...rest] = argv;
  if (name === undefined) throw new AdminCommandError(adminHelp(), 2);
  if (name === "--help" || name === "-h") return { help: adminHelp() };
  const command = known(name);
  try {
    const parsed = parseArgs(command.args, rest);
    if (parsed.help) return { help: commandHelp(command) };
    if (name === "help") return { help: helpFor(optionalText(parsed.values, "command")) };
    return { command, args: parsed.values };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    throw new AdminCommandError(`${name}: ${err.message}\nusage: npm run admin -- ${command.usage}`, 2);
  }
}

export async function runAdminCommand(deps: AppDeps, argv: string[]): Promise<string> {
  const request = parseAdminCommand(argv);
  if ("help" in request) return request.help;
  const { command, args } = request;
  // A process that has just started has not connected yet: waiting is not the same as Redis being down.
  if (command.queue && !(await whenReady(deps.queues.connection, QUEUE_READY_TIMEOUT_MS))) {
    throw new AdminCommandError(`the job queue (Redis) did not answer within ${QUEUE_READY_TIMEOUT_MS / 1000} s; nothing was changed`);
  }
  return command.run(deps, args);
}
