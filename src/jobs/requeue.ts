import { whenReady } from "../platform/redis.js";
import { type JobDeps, registeredRecoveries } from "./registry.js";

/**
 * Operator recovery after Redis lost data (`npm run admin -- requeue-lost`): every job kind whose
 * row says queued or running but whose queue entry is gone gets its entry back, under the same job
 * id, so running the command twice (or while the entries are back) adds nothing. Each kind brings
 * its own recovery (src/job-kinds.ts): collection jobs resume from each platform's cursor, analyses
 * restart and their streams continue after the stored events, workflow runs queue the step they are
 * at, meeting-note syncs (whose key lived only in the lost entry) fail with a reason, stored rows
 * without enrichment and open webhook deliveries are queued again.
 */
export async function requeueLost(deps: JobDeps, options: { olderThanSeconds?: number } = {}): Promise<string> {
  if (!(await whenReady(deps.queues.connection, 5000))) throw new Error("the job queue (Redis) is unavailable; nothing was requeued");
  const recoveries = registeredRecoveries();
  if (recoveries.length === 0) throw new Error("no job kind is registered (import src/job-kinds.ts in the process's entry)");
  const lines: string[] = [];
  for (const recovery of recoveries) lines.push(await recovery.run(deps, { olderThanSeconds: options.olderThanSeconds ?? 0 }));
  return lines.join("\n");
}
