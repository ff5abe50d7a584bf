import { parseArgs } from "node:util";
import { planBatch } from "../../src/intake/ingest/plan.js";
import { IngestRequestBody } from "../../src/intake/ingest/schemas.js";
import { parseInput } from "../../src/platform/validation.js";
import { makeBatch, planCopyData } from "./corpus.js";

/**
 * The ingest service's CPU per batch, stage by stage, in one process without a database: the
 * body's JSON parse, validation (zod and the unsafe-text walk), the batch plan (dedup keys and
 * hashes) and the COPY data. What `bench/ingest` prints as the web process's main-thread work per 1,000 rows, split.
 *
 *   npx tsx bench/ingest/stages.ts [--sources 500] [--comments 5] [--runs 40]
 */
const { values: args } = parseArgs({
  options: {
    sources: { type: "string", default: "500" },
    comments: { type: "string", default: "5" },
    runs: { type: "string", default: "40" },
  },
});
const shape = { sources: Number(args.sources), comments: Number(args.comments), sourceWords: 250, commentWords: 40 };
const runs = Number(args.runs);
const body = JSON.stringify({ entity_id: "bench", ...makeBatch("stages", shape) });
const rows = shape.sources * (1 + shape.comments);

function timed(label: string, work: () => unknown) {
  for (let i = 0; i < 5; i++) work();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    work();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)] ?? 0;
  console.log(
    `${label.padEnd(22)} median ${median.toFixed(2).padStart(6)} ms a batch, ${((median / rows) * 1000).toFixed(2)} ms per 1,000 rows`,
  );
}

const entity = { id: "00000000-0000-4000-8000-000000000001", workspaceId: "00000000-0000-4000-8000-000000000002" };
const parsed = JSON.parse(body) as unknown;
const request = parseInput(IngestRequestBody, parsed, "body");
const plan = planBatch(request);
console.log(
  `one batch: ${shape.sources} sources x (1 + ${shape.comments} comments) = ${rows} rows, ${(body.length / 1e6).toFixed(2)} MB JSON`,
);
timed("JSON.parse", () => JSON.parse(body));
timed("validation", () => parseInput(IngestRequestBody, parsed, "body"));
timed("plan", () => planBatch(request));
timed("COPY data", () => planCopyData(plan, entity));
