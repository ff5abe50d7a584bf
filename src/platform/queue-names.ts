/** The BullMQ queues, one Worker per queue in each worker process (the job catalog is in queues.ts). */
export const QUEUE_NAMES = ["collection", "analysis", "enrichment", "notes-sync", "workflow-run", "routines", "webhooks"] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];
