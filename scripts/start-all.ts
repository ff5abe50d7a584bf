import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

/**
 * `npm start`: applies migrations, then runs the web and worker processes side by side
 * (the Procfile's `release`, `web` and `worker`), stopping both when either exits.
 */
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const tsx = path.join(root, "node_modules", "tsx", "dist", "cli.mjs");
const run = (script: string) => spawn(process.execPath, [tsx, path.join(root, script)], { stdio: "inherit", env: process.env });

const migrate = run("scripts/migrate.ts");
const code: number = await new Promise((resolve) => migrate.on("exit", (c) => resolve(c ?? 1)));
if (code !== 0) process.exit(code);

const children: ChildProcess[] = [run("src/server.ts"), run("workers/index.ts")];
let stopping = false;
const stop = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill(signal);
};
for (const child of children) {
  child.on("exit", (c) => {
    stop("SIGTERM");
    if (children.every((ch) => ch.exitCode !== null || ch.signalCode !== null)) process.exit(c ?? 0);
  });
}
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));
