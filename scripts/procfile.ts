import { readFileSync } from "node:fs";
import path from "node:path";

/** The project root (this file lives in `scripts/`). */
export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");

/**
 * The Procfile's process types and their commands, in file order. The Procfile is the one place
 * that says how each process starts: `npm start` and docker-compose.yml run exactly these commands.
 */
export function readProcfile(file = path.join(ROOT, "Procfile")): Map<string, string> {
  const processes = new Map<string, string>();
  for (const raw of readFileSync(file, "utf8").split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [, type, command] = /^([A-Za-z0-9_-]+):\s*(.+)$/.exec(line) ?? [];
    if (!type || !command) throw new Error(`Procfile: cannot read the line "${line}"`);
    processes.set(type, command);
  }
  return processes;
}

/**
 * A Procfile command as an argument vector for `spawn` without a shell. Commands start with
 * `node`, which is replaced by the running Node binary, so no wrapper process sits in between.
 */
export function commandArgv(command: string, nodePath = process.execPath): [string, ...string[]] {
  const [program, ...args] = command.split(/\s+/);
  if (program !== "node") throw new Error(`Procfile: expected a command that starts with "node", got "${command}"`);
  return [nodePath, ...args];
}
