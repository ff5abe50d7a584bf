import { spawn } from "node:child_process";
import { createLogger } from "../src/platform/logger.js";
import { commandArgv, ROOT, readProcfile } from "./procfile.js";
import { stopOnSignals, supervise } from "./supervise.js";

/**
 * `npm start`: runs the Procfile's `release` (migrations, creating the database if missing), then its
 * `web` and `worker` side by side with the same Node flags as in production, each one Node process
 * started directly (no tsx or npm wrapper in between). A process that exits on its own (a crash) is
 * started again with a growing delay; one that keeps exiting right after starting stops everything
 * (`scripts/supervise.ts`). SIGINT/SIGTERM stop both, each draining once (see `stopOnSignals`).
 */
const procfile = readProcfile();
const argv = (type: string): [string, ...string[]] => {
  const command = procfile.get(type);
  if (!command) throw new Error(`Procfile: no "${type}" process`);
  return commandArgv(command);
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
