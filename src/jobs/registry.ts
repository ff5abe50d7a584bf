import type { AppDeps } from "../platform/deps.js";
import type { JobEvent, JobKind } from "./events.js";

/**
 * What the job kinds tell the shared lifecycle about themselves. `src/jobs` knows no domain:
 * each kind's module registers what it adds (src/job-kinds.ts, imported by every process's entry),
 * and the lifecycle, the cancel and the operator's recovery read it here.
 */
export type JobDeps = Pick<AppDeps, "db" | "pool" | "queues" | "redis" | "config" | "logger" | "reads">;

export interface KindDefinition {
  /**
   * What a cancel settles besides the row's status, in the same statement: a SET fragment over the
   * kind's table (a collection job's platforms that are not final become `cancelled`).
   */
  cancelAlsoSets?: string;
}

/** A kind's recovery after Redis lost queue entries: it puts back what it lost and answers one line for the operator. */
export interface Recovery {
  name: string;
  run: (deps: JobDeps, options: { olderThanSeconds: number }) => Promise<string>;
}

/** Told of every job end in a workspace that listens (webhook endpoints): never throws for its own failures. */
export type EndListener = (deps: JobDeps, event: JobEvent) => Promise<unknown>;

const kinds = new Map<JobKind, KindDefinition>();
const recoveries = new Map<string, Recovery>();
const endListeners = new Set<EndListener>();

export function defineKind(kind: JobKind, definition: KindDefinition): void {
  kinds.set(kind, definition);
}

export const kindDefinition = (kind: JobKind): KindDefinition => kinds.get(kind) ?? {};

/** Adds a recovery; recoveries run in the order they were added, each once however often it is added. */
export function addRecovery(recovery: Recovery): void {
  if (!recoveries.has(recovery.name)) recoveries.set(recovery.name, recovery);
}

export const registeredRecoveries = (): Recovery[] => [...recoveries.values()];

export function onJobEnd(listener: EndListener): void {
  endListeners.add(listener);
}

export const jobEndListeners = (): EndListener[] => [...endListeners];
