import { readFileSync } from "node:fs";
import path from "node:path";
import { projectRoot } from "../src/platform/paths.js";

/** The project root, whether this file runs from `scripts/` or compiled from `dist/scripts/`. */
export const ROOT = projectRoot();

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

/**
 * A Procfile command's argument vector with its compiled entry (`dist/<path>.js`) replaced by the
 * TypeScript source run through tsx's loader (`--import tsx <path>.ts`), every other flag kept:
 * how `npm run dev` runs the same processes from the sources, without a build.
 */
export function fromSource(argv: [string, ...string[]]): [string, ...string[]] {
  const [program, ...args] = argv;
  const at = args.findIndex((arg) => /^dist\/.+\.js$/.test(arg));
  if (at < 0) throw new Error(`Procfile: no compiled entry (dist/….js) in "${argv.join(" ")}"`);
  const source = (args[at] as string).replace(/^dist\/(.+)\.js$/, "$1.ts");
  return [program, ...args.slice(0, at), "--import", "tsx", source, ...args.slice(at + 1)];
}
