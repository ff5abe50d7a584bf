import { commentDedupKey, sha256, sourceDedupKey, storableJson, storableText } from "./dedup.js";
import type { IngestRequest } from "./schemas.js";

/**
 * Turns a validated batch into the rows to write: one row per distinct dedup key (the
 * first occurrence wins), and for every received item the key of the row that
 * acknowledges it, in request order.
 */
export interface PlannedRow {
  dedup_key: string;
  parent_key: string | null;
  platform: string;
  external_id: string | null;
  url: string;
  title: string;
  content: string;
  author: string;
  published_at: string | null;
  engagement: Record<string, number>;
  metadata: unknown;
  content_hash: string;
}

/** Rows in dedup-key order: both writers insert in it, so batches sharing keys lock them in one order. */
export const byDedupKey = (a: PlannedRow, b: PlannedRow) => (a.dedup_key < b.dedup_key ? -1 : a.dedup_key > b.dedup_key ? 1 : 0);

export interface BatchPlan {
  sources: PlannedRow[];
  comments: PlannedRow[];
  /** Per received source, in request order: the key of the row that stores it. */
  sourceKeys: string[];
  /** Per received comment (sources in order, then each source's comments in order). */
  commentKeys: string[];
}

const definedCounts = (counts: Record<string, number | undefined>) =>
  Object.fromEntries(Object.entries(counts).filter((entry): entry is [string, number] => entry[1] !== undefined));

export function planBatch(request: IngestRequest): BatchPlan {
  const sources = new Map<string, PlannedRow>();
  const comments = new Map<string, PlannedRow>();
  const sourceKeys: string[] = [];
  const commentKeys: string[] = [];

  for (const source of request.sources) {
    const content = storableText(source.content);
    const url = storableText(source.url);
    const externalId = source.id ? storableText(source.id) : "";
    const key = sourceDedupKey(source.platform, { id: externalId, url, body: content });
    sourceKeys.push(key);
    if (!sources.has(key)) {
      sources.set(key, {
        dedup_key: key,
        parent_key: null,
        platform: source.platform,
        external_id: externalId || null,
        url,
        title: storableText(source.title),
        content,
        author: storableText(source.author),
        published_at: source.published_at?.toISOString() ?? null,
        engagement: definedCounts({ ...(source.engagement ?? {}) }),
        metadata: source.metadata === undefined ? null : storableJson(source.metadata),
        content_hash: sha256(content),
      });
    }
    for (const comment of source.comments) {
      const text = storableText(comment.text);
      const commentUrl = storableText(comment.url ?? "");
      const commentId = comment.id ? storableText(comment.id) : "";
      const commentKey = commentDedupKey(key, { id: commentId, url: commentUrl, body: text });
      commentKeys.push(commentKey);
      if (comments.has(commentKey)) continue;
      comments.set(commentKey, {
        dedup_key: commentKey,
        parent_key: key,
        platform: source.platform,
        external_id: commentId || null,
        url: commentUrl,
        title: "",
        content: text,
        author: storableText(comment.author),
        published_at: comment.published_at?.toISOString() ?? null,
        engagement: definedCounts({ likes: comment.likes, replies: comment.replies }),
        metadata: comment.metadata === undefined ? null : storableJson(comment.metadata),
        content_hash: sha256(text),
      });
    }
  }
  return { sources: [...sources.values()], comments: [...comments.values()], sourceKeys, commentKeys };
}
