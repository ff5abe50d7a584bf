import { readFileSync } from "node:fs";

/**
 * The fields of /proc/<pid>/stat after the command name (which may hold spaces): index 1 is the parent
 * pid, 11 and 12 utime and stime, 13 and 14 cutime and cstime (the reaped children's), in ticks.
 */
export function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** Linux's USER_HZ: ticks to milliseconds. */
export const TICK_MS = 10;

/** CPU time (user + system, ms) used so far by the given processes (0 for a process that is gone). */
export function cpuMs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = statFields(pid);
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return ticks * TICK_MS;
}
