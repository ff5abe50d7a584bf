import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * `npm run build`: compiles src/, workers/ and scripts/ with `tsc -p tsconfig.build.json` (source maps
 * beside each file), copies the files the compiled code reads beside itself at run time (every file of
 * src/ and workers/ that is not TypeScript, e.g. src/insights/enrichment/feedback-kind/model.json), and records
 * a hash of every input in `dist/build-info.json`. `--check` (the `prestart` of `npm start` and the
 * operator scripts) exits 1 with a sentence saying what to do when dist/ is missing or was built from
 * other sources; `--if-stale` builds only then.
 *
 * The build goes to a folder beside dist/ (same depth, so the source maps' relative paths hold) that
 * replaces dist/ once complete, so a process starting meanwhile finds the old build or the new one,
 * never half of one; a lock serialises builds of one checkout. Runs on Node's own type stripping
 * (`node scripts/build.ts`), as it must work before anything is compiled and without tsx.
 */
export const ROOT = path.resolve(import.meta.dirname, "..");
export const DIST = path.join(ROOT, "dist");
const INFO = "build-info.json";
/** Folders compiled (tsconfig.build.json's `include`), and the files whose change changes the output. */
const SOURCE_DIRS = ["src", "workers", "scripts"];
const CONFIG_FILES = ["tsconfig.json", "tsconfig.build.json"];
/** Folders whose non-TypeScript files are read at run time next to the compiled code. */
const RUNTIME_FILE_DIRS = ["src", "workers"];

/** A build that cannot be made, for a reason said in one sentence. */
class BuildError extends Error {}

interface BuildInfo {
  built_at: string;
  node: string;
  /** Project-relative path → sha256 of the file's bytes. */
  inputs: Record<string, string>;
}

function walk(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join("/");

/** Every input of the build with the hash of its bytes. */
export function hashInputs(): Record<string, string> {
  const files = [...SOURCE_DIRS.flatMap((d) => walk(path.join(ROOT, d))), ...CONFIG_FILES.map((f) => path.join(ROOT, f))];
  const inputs: Record<string, string> = {};
  for (const file of files.filter((f) => existsSync(f)).sort()) {
    inputs[rel(file)] = createHash("sha256").update(readFileSync(file)).digest("hex");
  }
  return inputs;
}

export type BuildState = { ok: true } | { ok: false; reason: "missing" | "stale"; message: string };

/** Whether dist/ holds a build of the sources as they are now. */
export function buildState(): BuildState {
  const infoFile = path.join(DIST, INFO);
  if (!existsSync(infoFile)) {
    return {
      ok: false,
      reason: "missing",
      message: `${existsSync(DIST) ? "dist/ holds no complete build" : "dist/ is missing"}: the service runs compiled code. Run \`npm run build\` (after \`npm ci\` and \`npm run generate\`), then start again.`,
    };
  }
  const built = (JSON.parse(readFileSync(infoFile, "utf8")) as BuildInfo).inputs;
  const now = hashInputs();
  // A slimmed image may ship dist/ without the sources: nothing to compare, the build is what runs.
  if (Object.keys(now).every((file) => CONFIG_FILES.includes(file))) return { ok: true };
  const changed = [...Object.keys(now).filter((file) => built[file] !== now[file]), ...Object.keys(built).filter((file) => !(file in now))];
  if (changed.length === 0) return { ok: true };
  const named = changed.slice(0, 3).join(", ") + (changed.length > 3 ? ` and ${changed.length - 3} more` : "");
  return {
    ok: false,
    reason: "stale",
    message: `dist/ is older than the sources (changed since it was built: ${named}), so it would run stale code. Run \`npm run build\`, then start again.`,
  };
}

/** Waits for and takes this checkout's build lock (a folder in the temp dir); answers its release. */
async function lock(): Promise<() => void> {
  const dir = path.join(tmpdir(), `res-build-${createHash("sha256").update(ROOT).digest("hex").slice(0, 16)}.lock`);
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(path.join(dir, "pid"), String(process.pid));
      return () => rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    // A lock left by a build that died is taken over.
    let holder = 0;
    let since = Date.now();
    try {
      since = statSync(dir).mtimeMs;
      holder = Number(readFileSync(path.join(dir, "pid"), "utf8")) || 0;
    } catch {
      // Released meanwhile, or taken and its pid not written yet.
    }
    if (holder > 0 ? !alive(holder) : Date.now() - since > 10_000) rmSync(dir, { recursive: true, force: true });
    if (Date.now() > deadline) throw new Error(`another build of ${ROOT} has held ${dir} for 5 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Compiles into a fresh folder, copies the run-time files, records the inputs and swaps it in as dist/. */
export function build(): void {
  if (!existsSync(path.join(ROOT, "src", "generated", "prisma", "client.ts"))) {
    throw new BuildError("the Prisma client is not generated (src/generated/prisma): run `npm run generate` first");
  }
  // Leftovers of builds that died half-way.
  for (const name of readdirSync(ROOT)) {
    const pid = /^\.dist-build-(\d+)$/.exec(name)?.[1];
    if (pid && !alive(Number(pid))) rmSync(path.join(ROOT, name), { recursive: true, force: true });
  }
  const inputs = hashInputs(); // before compiling: an edit made meanwhile makes the build stale, not falsely fresh
  const out = path.join(ROOT, `.dist-build-${process.pid}`);
  const old = path.join(ROOT, `.dist-old-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  try {
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    const compiled = spawnSync(process.execPath, [tsc, "-p", path.join(ROOT, "tsconfig.build.json"), "--outDir", out], {
      cwd: ROOT,
      stdio: "inherit",
    });
    if (compiled.status !== 0) throw new BuildError(`tsc failed (exit ${compiled.status ?? compiled.signal}): dist/ is unchanged`);
    let copied = 0;
    for (const dir of RUNTIME_FILE_DIRS) {
      for (const file of walk(path.join(ROOT, dir))) {
        if (file.endsWith(".ts") || file.endsWith(".md") || rel(file).startsWith("src/generated/")) continue;
        const target = path.join(out, path.relative(ROOT, file));
        mkdirSync(path.dirname(target), { recursive: true });
        copyFileSync(file, target);
        copied++;
      }
    }
    const info: BuildInfo = { built_at: new Date().toISOString(), node: process.version, inputs };
    writeFileSync(path.join(out, INFO), `${JSON.stringify(info, null, 1)}\n`);
    if (existsSync(DIST)) renameSync(DIST, old);
    renameSync(out, DIST);
    const files = walk(DIST).filter((f) => f.endsWith(".js")).length;
    console.log(`build: dist/ holds ${files} compiled files with source maps and ${copied} run-time file(s)`);
  } finally {
    rmSync(out, { recursive: true, force: true });
    rmSync(old, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const mode = process.argv[2];
  if (mode !== undefined && mode !== "--check" && mode !== "--if-stale") {
    console.error("usage: node scripts/build.ts [--check | --if-stale]");
    process.exit(2);
  }
  if (mode === "--check") {
    const state = buildState();
    if (!state.ok) {
      console.error(state.message);
      process.exit(1);
    }
  } else {
    const release = await lock();
    try {
      // Another build may have finished while this one waited for the lock.
      if (mode !== "--if-stale" || !buildState().ok) build();
    } catch (err) {
      if (!(err instanceof BuildError)) throw err;
      console.error(`build: ${err.message}`);
      process.exitCode = 1;
    } finally {
      release();
    }
  }
}
