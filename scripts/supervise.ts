import { type ChildProcess, spawn } from "node:child_process";

/**
 * Runs processes side by side and starts again one that exits without being asked to, with a
 * non-zero code or by a signal (a crash, which the processes log and answer with exit 1, or the
 * OOM killer), after a delay that doubles with each exit soon after a start. A process that keeps
 * exiting soon after starting (`maxQuickExits` in a row: a bad setting, a port in use) is given
 * up: everything stops, and `done` answers its exit code, so a start that cannot work fails
 * visibly instead of looping. A process that exits 0 was shut down: the others stop too.
 */
export interface SuperviseOptions {
  /** Delay before the first restart; doubles with each quick exit in a row, up to `maxDelayMs`. */
  restartDelayMs?: number;
  maxDelayMs?: number;
  /** An exit after running this long is not a quick one: the delay starts over. */
  healthyAfterMs?: number;
  /** Quick exits in a row after which the process is given up. */
  maxQuickExits?: number;
  cwd?: string;
  log?: (level: "info" | "warn" | "error", fields: Record<string, unknown>, message: string) => void;
}

export interface Supervision {
  /** Stops every process with `signal` and restarts none; `done` then answers 0 (or the code of a process given up). */
  stop: (signal?: NodeJS.Signals) => void;
  /** Settles once every process has exited after a stop. */
  done: Promise<number>;
  /** The running process of each name (for tests and diagnostics). */
  current: (name: string) => ChildProcess | undefined;
}

export function supervise(commands: Map<string, [string, ...string[]]>, options: SuperviseOptions = {}): Supervision {
  const { restartDelayMs = 1000, maxDelayMs = 30_000, healthyAfterMs = 10_000, maxQuickExits = 5 } = options;
  const log = options.log ?? (() => undefined);
  const running = new Map<string, ChildProcess>();
  const timers = new Set<NodeJS.Timeout>();
  let stopping = false;
  let exitCode = 0;
  let finish: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (finish = resolve));

  const settleIfIdle = () => {
    if (stopping && running.size === 0 && timers.size === 0) finish(exitCode);
  };

  const stop = (signal: NodeJS.Signals = "SIGTERM") => {
    stopping = true;
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    for (const child of running.values()) child.kill(signal);
    settleIfIdle();
  };

  const start = (name: string, quickExits: number) => {
    const [program, ...args] = commands.get(name) as [string, ...string[]];
    const startedAt = Date.now();
    const child = spawn(program, args, { cwd: options.cwd, stdio: "inherit", env: process.env });
    running.set(name, child);
    child.on("error", (err) => log("error", { child: name, err: err.message }, "the process could not be started or signalled"));
    child.on("exit", (code, signal) => {
      running.delete(name);
      if (stopping) {
        log(code === 0 ? "info" : "warn", { child: name, code, signal }, "the process stopped");
        return settleIfIdle();
      }
      if (code === 0) {
        // Only a shutdown ends a process with 0 (a signal sent to it alone, or to the whole group
        // before this process heard of it): the others stop too.
        log("info", { child: name }, "the process stopped; the others stop too");
        return stop("SIGTERM");
      }
      const ranMs = Date.now() - startedAt;
      const quick = ranMs < healthyAfterMs ? quickExits + 1 : 0;
      if (quick >= maxQuickExits) {
        log("error", { child: name, code, signal, quick_exits: quick }, "the process keeps exiting soon after it starts; everything stops");
        exitCode = code ?? 1;
        return stop("SIGTERM");
      }
      const delayMs = Math.min(maxDelayMs, restartDelayMs * 2 ** Math.max(0, quick - 1));
      log("warn", { child: name, code, signal, ran_ms: ranMs, restart_in_ms: delayMs }, "the process exited; it starts again");
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!stopping) start(name, quick);
      }, delayMs);
      timers.add(timer);
    });
  };

  for (const name of commands.keys()) start(name, 0);
  return { stop, done, current: (name) => running.get(name) };
}

/**
 * SIGINT and SIGTERM stop every process once, with the same signal. A terminal's Ctrl-C (or a
 * platform's SIGTERM to the whole group) has reached the processes already, and the supervisor
 * cannot tell such a signal from one sent to it alone (`kill <pid>`, a container's PID 1), so it
 * sends it on either way; the processes take a repeat within 1 s of the first signal as the same
 * stop (`src/platform/shutdown.ts`), so one signal from outside means one graceful shutdown.
 */
export function stopOnSignals(supervision: Supervision): void {
  process.on("SIGINT", () => supervision.stop("SIGINT"));
  process.on("SIGTERM", () => supervision.stop("SIGTERM"));
}
