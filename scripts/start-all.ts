import { type ChildProcess, spawn } from "node:child_process";
import { commandArgv, ROOT, readProcfile } from "./procfile.js";

/**
 * `npm start`: runs the Procfile's `release` (migrations, creating the database if missing), then its
 * `web` and `worker` side by side with the same Node flags as in production, each one Node process
 * started directly (no tsx or npm wrapper in between). Stops both when either exits or on SIGINT/SIGTERM.
 */
const procfile = readProcfile();
const run = (type: string): ChildProcess => {
  const command = procfile.get(type);
  if (!command) throw new Error(`Procfile: no "${type}" process`);
  const [program, ...args] = commandArgv(command);
  return spawn(program, args, { cwd: ROOT, stdio: "inherit", env: process.env });
};

const release = run("release");
const code: number = await new Promise((resolve) => release.on("exit", (c) => resolve(c ?? 1)));
if (code !== 0) process.exit(code);

const children: ChildProcess[] = [run("web"), run("worker")];
let stopping = false;
let exitCode = 0;
const stop = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const child of children) {
  child.on("exit", (c, signal) => {
    // A child that exits by itself (not asked to) makes the whole start fail.
    if (!stopping && (c !== 0 || signal)) exitCode = c ?? 1;
    stop("SIGTERM");
    if (children.every((ch) => ch.exitCode !== null || ch.signalCode !== null)) process.exit(exitCode);
  });
}
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));
