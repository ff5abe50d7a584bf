import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * A CPU quota for a process (Linux control groups; needs write access to the cpu controller, as root has):
 * the process and every thread it starts get at most `cores` cores' worth of CPU time per period, so one
 * machine can stand for processes that each have cores of their own (say, worker processes on separate
 * machines beside a database that keeps its own). cgroup v1's `cpu` controller (`cpu.cfs_quota_us`) where it
 * is mounted, else cgroup v2's `cpu.max`.
 */
export interface CpuQuota {
  /** Moves a process (all its threads) into the group. */
  add: (pid: number) => void;
  /** Removes the group (its processes must have exited). */
  remove: () => void;
}

const V1 = "/sys/fs/cgroup/cpu";
const V2 = "/sys/fs/cgroup";
const PERIOD_US = 100_000;

export function cpuQuota(name: string, cores: number): CpuQuota {
  if (!(cores > 0)) throw new Error(`a CPU quota needs a positive number of cores, not ${cores}`);
  const quota = String(Math.round(cores * PERIOD_US));
  let dir: string;
  if (existsSync(path.join(V1, "cpu.cfs_quota_us"))) {
    dir = path.join(V1, name);
    mkdirSync(dir);
    writeFileSync(path.join(dir, "cpu.cfs_period_us"), String(PERIOD_US));
    writeFileSync(path.join(dir, "cpu.cfs_quota_us"), quota);
  } else if (existsSync(path.join(V2, "cgroup.controllers")) && readFileSync(path.join(V2, "cgroup.controllers"), "utf8").includes("cpu")) {
    dir = path.join(V2, name);
    mkdirSync(dir);
    writeFileSync(path.join(dir, "cpu.max"), `${quota} ${PERIOD_US}`);
  } else {
    throw new Error("no writable cgroup cpu controller on this machine (CPU quotas need Linux control groups and root)");
  }
  return {
    add: (pid) => writeFileSync(path.join(dir, "cgroup.procs"), String(pid)),
    remove: () => rmdirSync(dir),
  };
}
