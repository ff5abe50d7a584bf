import { grantCredits } from "../billing/ledger.js";
import { requeueJob, requeueStalled } from "../collection/requeue.js";
import { requeueUnenriched } from "../ingest/requeue.js";
import type { AppDeps } from "../platform/deps.js";

/**
 * Operator commands. Each takes plain arguments and answers one line of text, so the
 * same functions serve the CLI (`npm run admin`) and the tests.
 */
type Command = { usage: string; run: (deps: AppDeps, args: string[]) => Promise<string> };

async function setRawExport(deps: AppDeps, sub: string | undefined, enabled: boolean): Promise<string> {
  if (!sub) throw new Error(`usage: ${enabled ? "enable" : "disable"}-raw-export <sub>`);
  await deps.db.user.upsert({ where: { sub }, create: { sub, rawExportEnabled: enabled }, update: { rawExportEnabled: enabled } });
  return `raw export ${enabled ? "enabled" : "disabled"} for ${sub}`;
}

async function setInternalAgent(deps: AppDeps, sub: string | undefined, enabled: boolean): Promise<string> {
  if (!sub) throw new Error("usage: mark-internal-agent <sub> | unmark-internal-agent <sub>");
  await deps.db.user.upsert({ where: { sub }, create: { sub, isInternalAgent: enabled }, update: { isInternalAgent: enabled } });
  return `${sub} is ${enabled ? "now" : "no longer"} an internal agent`;
}

async function grant(deps: AppDeps, [workspaceId, amountText, ...note]: string[]): Promise<string> {
  const amount = Number(amountText);
  if (!workspaceId || !/^[0-9a-f-]{36}$/i.test(workspaceId) || !Number.isInteger(amount) || amount <= 0) {
    throw new Error("usage: grant-credits <workspace_id> <positive whole amount> [note]");
  }
  const workspace = await deps.db.workspace.findUnique({ where: { id: workspaceId } });
  if (!workspace) throw new Error(`workspace ${workspaceId} does not exist`);
  const total = await grantCredits(deps.db, workspaceId, amount, note.length > 0 ? note.join(" ") : undefined);
  return `granted ${amount} credits to ${workspaceId}; balance ${total}`;
}

export const adminCommands: Record<string, Command> = {
  "requeue-stalled": {
    usage: "requeue-stalled [older_than_seconds]",
    run: (d, [age]) => requeueStalled(d, { olderThanSeconds: age === undefined ? 0 : Math.max(0, Number(age) || 0) }),
  },
  "requeue-job": {
    usage: "requeue-job <collection_job_id>",
    run: (d, [id]) => {
      if (!id) throw new Error("usage: requeue-job <collection_job_id>");
      return requeueJob(d, id);
    },
  },
  "requeue-enrichment": { usage: "requeue-enrichment [entity_id]", run: (d, [entityId]) => requeueUnenriched(d, entityId) },
  "grant-credits": { usage: "grant-credits <workspace_id> <amount> [note]", run: grant },
  "enable-raw-export": { usage: "enable-raw-export <sub>", run: (d, [sub]) => setRawExport(d, sub, true) },
  "disable-raw-export": { usage: "disable-raw-export <sub>", run: (d, [sub]) => setRawExport(d, sub, false) },
  "mark-internal-agent": { usage: "mark-internal-agent <sub>", run: (d, [sub]) => setInternalAgent(d, sub, true) },
  "unmark-internal-agent": { usage: "unmark-internal-agent <sub>", run: (d, [sub]) => setInternalAgent(d, sub, false) },
};

export async function runAdminCommand(deps: AppDeps, argv: string[]): Promise<string> {
  const [name, ...args] = argv;
  const command = name ? adminCommands[name] : undefined;
  if (!command) {
    const usage = Object.values(adminCommands).map((c) => `  npm run admin -- ${c.usage}`);
    throw new Error(`${name ? `unknown command '${name}'\n` : ""}commands:\n${usage.join("\n")}`);
  }
  return command.run(deps, args);
}
