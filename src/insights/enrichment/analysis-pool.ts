import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { type Analyser, analyseRows, type RowAnalysis, type RowText } from "./analyse.js";

/**
 * Enrichment's analysis on more cores than the one the worker's event loop runs on: `threads`
 * worker threads (piscina) beside this thread. A chunk goes to a thread when one is free; when all
 * are busy, this thread analyses it itself, so with one thread a two-core machine runs two chunks at
 * once and the threads never queue work this thread could do. Each thread loads the engine once (its
 * lexicons and models, about 60 MB). With `threads` 0 every chunk is analysed inline.
 */
export interface AnalysisPool {
  analyse: Analyser;
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
    new Piscina<RowText[], RowAnalysis[]>({
      filename: entry.filename,
      execArgv: entry.execArgv,
      minThreads: threads,
      maxThreads: threads,
      concurrentTasksPerWorker: 1,
    });
  let busy = 0;
  return {
    analyse: async (rows) => {
      if (!pool || busy >= threads) {
        counts.inline++;
        return analyseRows(rows);
      }
      busy++;
      counts.threaded++;
      try {
        return await pool.run(rows as RowText[]);
      } finally {
        busy--;
      }
    },
    counts: () => ({ ...counts }),
    close: async () => {
      await pool?.destroy();
    },
  };
}
