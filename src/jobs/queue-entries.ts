import type { Queue } from "bullmq";

/** Queue states in which an entry will still run. */
export const LIVE_QUEUE_STATES: ReadonlySet<string> = new Set(["waiting", "active", "delayed", "prioritized", "waiting-children"]);

/**
 * True while the queue holds the job in a state that will still run it. A finished entry is
 * removed (BullMQ would ignore a new add under the same id), and false is answered.
 */
export async function heldInQueue(queue: Queue, jobId: string): Promise<boolean> {
  const job = await queue.getJob(jobId);
  if (!job) return false;
  if (LIVE_QUEUE_STATES.has(await job.getState())) return true;
  await job.remove();
  return false;
}
