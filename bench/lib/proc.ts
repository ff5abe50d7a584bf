import { readdirSync, readFileSync } from "node:fs";

/**
 * A /proc stat file (a process's `<pid>`, or one thread's `<pid>/task/<tid>`): the command or thread name
 * (which may hold spaces), and the fields after it: index 1 is the parent pid, 11 and 12 utime and stime,
 * 13 and 14 cutime and cstime (the reaped children's), in ticks.
 */
function readStat(of: number | string): { name: string; fields: string[] } {
  const stat = readFileSync(`/proc/${of}/stat`, "utf8");
  return { name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), fields: stat.slice(stat.lastIndexOf(")") + 2).split(" ") };
}

/** The fields of /proc/<pid>/stat after the command name (`readStat`). */
export const statFields = (pid: number | string): string[] => readStat(pid).fields;

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

/** The postmaster of the server a backend (by its pid) belongs to, or null when that server is not on this machine. */
export function postmasterOf(backendPid: number): number | null {
  try {
    return Number(statFields(backendPid)[1]);
  } catch {
    return null;
  }
}

/**
 * CPU (user + system, ms) of a PostgreSQL server so far: its postmaster's own and its reaped
 * children's (backends that exited) plus that of every live child, read from /proc, so it counts
 * backends that come and go and the background writers; on a shared machine it also counts other
 * databases' work. NaN when the server is not on this machine.
 */
export function serverCpuMs(postmaster: number | null): number {
  if (postmaster === null) return Number.NaN;
  const own = statFields(postmaster);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = statFields(entry);
      if (Number(fields[1]) === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process has exited
    }
  }
  return ticks * TICK_MS;
}

/**
 * CPU (user + system, ms) used so far by each thread of a process, summed by thread name (V8's
 * helper threads, which run garbage collection and compilation, are all named `V8Worker`). Empty
 * when the process is gone.
 */
export function threadCpuMs(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const task of tasks) {
    try {
      const { name, fields } = readStat(`${pid}/task/${task}`);
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * TICK_MS);
    } catch {
      // the thread has exited
    }
  }
  return byName;
}
