import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { commandArgv, readProcfile } from "../../scripts/procfile.js";
import { projectRoot } from "../../src/platform/paths.js";

/**
 * The production commands, for tests that start a process as production does: the Procfile's
 * `release`, `web` and `worker`, and the npm scripts operators run (`token`, `admin`, `db:migrate`),
 * all `node … dist/…` on the compiled code. Tests of development flows and test-only entries keep
 * running TypeScript through tsx.
 */
const root = projectRoot();

/**
 * Builds dist/ when it is missing or older than the sources (`node scripts/build.ts --if-stale`;
 * the build's lock makes concurrent test files wait for one build). Call in `beforeAll`.
 */
export function ensureBuilt(): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(root, "scripts", "build.ts"), "--if-stale"],
      { cwd: root, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => (err ? reject(new Error(`npm run build failed: ${err.message}\n${stdout}${stderr}`)) : resolve()),
    );
  });
}

/** The Procfile's command of a process type as an argument vector (this Node binary first). */
export function procfileArgv(type: "release" | "web" | "worker"): [string, ...string[]] {
  const command = readProcfile().get(type);
  if (!command) throw new Error(`the Procfile has no ${type} process`);
  return commandArgv(command);
}

/** An npm script's command (package.json) as an argument vector, as `npm run <name>` runs it without npm. */
export function npmScriptArgv(name: string): [string, ...string[]] {
  const scripts = (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  const command = scripts[name];
  if (!command) throw new Error(`package.json has no "${name}" script`);
  return commandArgv(command);
}
