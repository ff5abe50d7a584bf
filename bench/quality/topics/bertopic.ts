import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AreaIssue } from "./areas.js";

/**
 * BERTopic, the peer the engine's themes are judged beside (bertopic/README.md): for one repository,
 * the documents the engine reads (an issue's body, or its title when the body is empty) go to
 * bertopic/run.py under the Python named by BERTOPIC_PYTHON, and its topics (outliers left out) come
 * back as themes. Results are kept in the system's temp folder under a hash of the documents, the
 * script and its requirements, so a rerun reads them instead of fitting again.
 */
export interface PeerTopic {
  topicId: number;
  /** BERTopic's label words (its first four topic words), stop words removed, joined by spaces. */
  name: string;
  /** The same with BERTopic's default vectorizer (stop words kept). */
  defaultName: string;
  sources: string[];
}

const HERE = join(import.meta.dirname, "bertopic");
const SCRIPT = join(HERE, "run.py");
const CACHE = join(tmpdir(), "res-bench-bertopic");

export const BERTOPIC_SKIPPED = "BERTopic: not run (set BERTOPIC_PYTHON to a python with bench/quality/topics/bertopic/requirements.txt)";

/** The Python to run BERTopic with, or null when none is set. */
export function bertopicPython(): string | null {
  const python = process.env.BERTOPIC_PYTHON?.trim();
  return python ? python : null;
}

/** The same text per issue as the engine's themes read (index.ts `themesOf`). */
export function bertopicDocuments(issues: readonly AreaIssue[]) {
  return issues.map((i) => ({ id: i.id, text: i.body.trim() === "" ? i.title : i.body }));
}

/**
 * BERTopic's topics for one repository's issues, with how they were had ("cached" or the fit's
 * seconds), or an error message when the script failed.
 */
export function bertopicThemes(python: string, issues: readonly AreaIssue[]): { topics: PeerTopic[]; how: string } | { error: string } {
  const input = JSON.stringify(bertopicDocuments(issues));
  const key = createHash("sha256")
    .update(input)
    .update("\0")
    .update(readFileSync(SCRIPT))
    .update("\0")
    .update(readFileSync(join(HERE, "requirements.txt")))
    .digest("hex")
    .slice(0, 32);
  mkdirSync(CACHE, { recursive: true });
  const cached = join(CACHE, `${key}.topics.json`);
  let how = "cached";
  if (!existsSync(cached)) {
    const inFile = join(CACHE, `${key}.documents.json`);
    const outFile = join(CACHE, `${key}.${process.pid}.partial.json`);
    writeFileSync(inFile, input);
    const t0 = performance.now();
    const run = spawnSync(python, [SCRIPT, inFile, outFile], { stdio: ["ignore", "inherit", "inherit"] });
    if (run.error) return { error: `${python}: ${run.error.message}` };
    if (run.status !== 0) return { error: `run.py exited with ${run.status ?? run.signal}` };
    renameSync(outFile, cached);
    how = `fitted in ${((performance.now() - t0) / 1000).toFixed(0)} s`;
  }
  const raw = JSON.parse(readFileSync(cached, "utf8")) as { topic_id: number; name: string; default_name: string; ids: string[] }[];
  return { topics: raw.map((t) => ({ topicId: t.topic_id, name: t.name, defaultName: t.default_name, sources: t.ids })), how };
}
