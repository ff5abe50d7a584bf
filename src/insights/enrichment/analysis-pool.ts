import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { type Analyser, analyseInline, type RowAnalysis, type RowText } from "./analyse.js";
import type { KindOverlay, LabelledText } from "./feedback-kind/adapt.js";
import { inlineKindThreads, type KindThreads } from "./kind-adaptation.js";

/**
 * Enrichment's analysis off the worker's event loop: `threads` worker threads (piscina) analyse the chunks,
 * a chunk waiting in piscina's queue while every thread is busy. The event loop only reads, embeds and
 * writes, so a chunk's transaction never waits on it: when it analysed chunks itself (whenever the threads
 * were busy), a transaction that held its entity's roll-up lock waited there for the analysis of another
 * chunk, about 100 ms for 200 rows, and so did every other writer of the entity; on two cores, behind a
 * 100,000-row import, analysing on the threads alone enriched faster at less memory (docs/benchmarks.md).
 * Each thread loads the engine once (its lexicons and models, about 60 MB). With `threads` 0 every chunk is
 * analysed inline, a few milliseconds at a time (`analyseInline`).
 */
export interface AnalysisPool {
  analyse: Analyser;
  /**
   * A tracker's adaptation and its issues read with it (kind-adaptation.ts): on a thread, or inline with no
   * threads, where the adaptation holds the event loop for its length (1–2 s for 1,000 labelled issues).
   */
  kinds: KindThreads;
  /** Chunks analysed on a thread and inline so far. */
  counts: () => { threaded: number; inline: number };
  close: () => Promise<void>;
}

/** The thread's entry: the compiled file beside this one, or, run from source, the TypeScript one through tsx. */
function threadEntry(): { filename: string; execArgv: string[] } {
  const compiled = fileURLToPath(new URL("./analysis-thread.js", import.meta.url));
  if (existsSync(compiled)) return { filename: compiled, execArgv: [] };
  return { filename: fileURLToPath(new URL("./analysis-thread.ts", import.meta.url)), execArgv: ["--import", "tsx"] };
}

export function createAnalysisPool(threads: number): AnalysisPool {
  const counts = { threaded: 0, inline: 0 };
  const entry = threads > 0 ? threadEntry() : undefined;
  const pool =
    entry &&
    new Piscina<RowText[] | LabelledText[] | { overlay: KindOverlay; rows: RowText[] }, unknown>({
      filename: entry.filename,
      execArgv: entry.execArgv,
      minThreads: threads,
      maxThreads: threads,
      concurrentTasksPerWorker: 1,
    });
  return {
    analyse: async (rows) => {
      if (!pool) {
        counts.inline++;
        return analyseInline(rows);
      }
      counts.threaded++;
      return (await pool.run(rows as RowText[])) as RowAnalysis[];
    },
    kinds: pool
      ? {
          adapt: async (labelled) => (await pool.run(labelled, { name: "adaptKindsTask" })) as KindOverlay | null,
          read: async (overlay, rows) =>
            (await pool.run({ overlay, rows }, { name: "readKindsTask" })) as Awaited<ReturnType<KindThreads["read"]>>,
        }
      : inlineKindThreads,
    counts: () => ({ ...counts }),
    close: async () => {
      await pool?.destroy();
    },
  };
}
