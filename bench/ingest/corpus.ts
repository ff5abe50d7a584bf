import { CONTENT_COPY_COLUMNS, copyDataOf } from "../../src/intake/ingest/copy.js";
import { type BatchPlan, planBatch } from "../../src/intake/ingest/plan.js";
import { IngestRequestSchema } from "../../src/intake/ingest/schemas.js";

/**
 * Deterministic batches shaped like collector output: sources of a few hundred words
 * with five comments each, drawn from a vocabulary large enough that the full-text
 * vector does real work.
 */
const WORDS = (
  "onboarding pricing support latency dashboard export invoice integration webhook migration outage " +
  "feature request bug crash slow fast reliable confusing intuitive expensive cheap team admin billing " +
  "search filter report analytics mobile desktop browser login password security compliance audit api " +
  "documentation tutorial example sdk python typescript golang rust deploy kubernetes docker cloud region " +
  "customer churn renewal contract trial upgrade downgrade seat license roadmap release changelog beta"
).split(" ");

function words(seed: number, count: number): string {
  let x = seed >>> 0 || 1;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.push(WORDS[(x >>> 0) % WORDS.length] as string);
    if (i % 17 === 16) out.push(".");
  }
  return out.join(" ");
}

export interface BatchShape {
  sources: number;
  comments: number;
  sourceWords: number;
  commentWords: number;
}

export function makeBatch(tag: string, shape: BatchShape) {
  return {
    sources: Array.from({ length: shape.sources }, (_, i) => ({
      id: `${tag}-s${i}`,
      title: `${tag} source ${i}: ${words(i * 7 + 3, 8)}`,
      url: `https://forum.example.com/${tag}/thread/${i}`,
      platform: "reddit",
      content: `${words(i * 31 + tag.length, shape.sourceWords)} (${tag}/${i})`,
      author: `user${i % 97}`,
      published_at: "2026-03-04T05:06:07Z",
      engagement: { likes: i % 50, comments: shape.comments, views: i * 10 },
      metadata: { subreddit: "acme", rank: i },
      comments: Array.from({ length: shape.comments }, (_, j) => ({
        id: `${tag}-s${i}-c${j}`,
        text: `${words(i * 101 + j * 13 + 7, shape.commentWords)} (${tag}/${i}/${j})`,
        author: `commenter${(i + j) % 211}`,
        likes: j,
        replies: 0,
      })),
    })),
  };
}

export const COPY_SQL = `COPY content_store (${CONTENT_COPY_COLUMNS.join(", ")}) FROM STDIN`;

/**
 * The rows the ingest service would store for `batch`, with the same dedup keys and hashes, as the
 * COPY data the service itself writes (`copyDataOf`), for another entity.
 */
export function copyData(batch: ReturnType<typeof makeBatch>, entity: { id: string; workspaceId: string }): Buffer {
  return planCopyData(planBatch(IngestRequestSchema.parse(batch)), entity);
}

/** A planned batch as the COPY data the service writes for it (`copyDataOf`), sources then comments. */
export function planCopyData(plan: BatchPlan, entity: { id: string; workspaceId: string }): Buffer {
  return copyDataOf(entity, plan, { collectionRunId: null, collectionScope: null, coverageState: null }, new Map()).data;
}
