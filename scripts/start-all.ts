import { spawn } from "node:child_process";
import { createLogger } from "../src/platform/logger.js";
import { commandArgv, fromSource, ROOT, readProcfile } from "./procfile.js";
import { stopOnSignals, supervise } from "./supervise.js";

/**
 * `npm start`: runs the Procfile's `release` (migrations, creating the database if missing), then its
 * `web` and `worker` side by side with the same Node flags as in production, each one Node process
 * started directly (no npm wrapper in between) on the compiled code in dist/ (`npm run build`; the
 * `prestart` check refuses a missing or stale build). A process that exits on its own (a crash) is
 * started again with a growing delay; one that keeps exiting right after starting stops everything
 * (`scripts/supervise.ts`). SIGINT/SIGTERM stop both, each draining once (see `stopOnSignals`).
 *
 * `--from-source` (`npm run dev`): the same processes and flags, each running its TypeScript source
 * through tsx's loader instead of its compiled entry, for development without a build.
 */
const procfile = readProcfile();
const sourceMode = process.argv.includes("--from-source");
const argv = (type: string): [string, ...string[]] => {
  const command = procfile.get(type);
  if (!command) throw new Error(`Procfile: no "${type}" process`);
  return sourceMode ? fromSource(commandArgv(command)) : commandArgv(command);
};

const [program, ...args] = argv("release");
const release = spawn(program, args, { cwd: ROOT, stdio: "inherit", env: process.env });
const code: number = await new Promise((resolve) => release.on("exit", (c) => resolve(c ?? 1)));
if (code !== 0) process.exit(code);

const logger = createLogger("info", "start");
const supervision = supervise(
  new Map([
    ["web", argv("web")],
    ["worker", argv("worker")],
  ]),
  { cwd: ROOT, log: (level, fields, message) => logger[level](fields, message) },
);
stopOnSignals(supervision);
process.exit(await supervision.done);
