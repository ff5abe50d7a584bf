import type { JobKind } from "./events.js";

/** The Redis channel on which a job's end is announced: callers waiting on it, and its worker's cancel watch. */
export const endedChannel = (prefix: string, kind: JobKind, id: string) => `${prefix}:job-ended:${kind}:${id}`;
