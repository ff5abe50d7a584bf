import { parseArgs } from "node:util";
import { ENGINE_RELOAD_CHARS, setEngineReload, tokenize } from "../../src/insights/enrichment/tokens.js";

/**
 * What wink-nlp's memory of unknown words costs the analyser's heap, with the engine loaded anew every
 * ENGINE_RELOAD_CHARS characters (tokens.ts) and, in a second process, never. Sentences of five words the
 * model has never seen (the worst case: every word new, as version numbers, paths and typos are) are read
 * until `--words` of them have passed; the heap is printed after a full collection at each quarter.
 *
 *   node --expose-gc --import tsx bench/enrichment/engine-memory.ts [--words 2000000] [--never]
 */
const { values: args } = parseArgs({ options: { words: { type: "string", default: "2000000" }, never: { type: "boolean" } } });
const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error("run with node --expose-gc");
const words = Number(args.words);
setEngineReload(args.never ? Number.MAX_SAFE_INTEGER : 0);
tokenize("Warm up the engine.");
collect();
const heap0 = process.memoryUsage().heapUsed;
const started = performance.now();
let id = 0;
let chars = 0;
console.log(`engine loaded anew every ${args.never ? "never" : `${ENGINE_RELOAD_CHARS / 1024 / 1024} M characters`}`);
for (let quarter = 1; quarter <= 4; quarter++) {
  while (id < (words * quarter) / 4) {
    const sentence = `The build of ${Array.from({ length: 5 }, () => `zq${(id++).toString(36)}x`).join(" and ")} fails again.`;
    chars += sentence.length;
    tokenize(sentence);
  }
  collect();
  const grown = (process.memoryUsage().heapUsed - heap0) / 1e6;
  console.log(
    `${id.toLocaleString("en")} unknown words (${(chars / 1e6).toFixed(0)} M characters): heap +${grown.toFixed(0)} MB, ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}
