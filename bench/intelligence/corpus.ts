import { createHash, randomUUID } from "node:crypto";
import type pg from "pg";
import { mulberry32 } from "../recall/corpus.js";

/**
 * A seeded corpus for the intelligence summary: originals of one entity (sources and comments on
 * several platforms, published over a year, more of them recently) each with one to four opinion
 * units about aspects drawn from a Zipf distribution (the lexicon's aspects first, then noun
 * phrases), on every side (complaint, praise, request, neutral; `tilt` makes an aspect lean to one
 * side), plus units without an aspect.
 * Each unit's text is the original's text at its offsets (ASCII, so code units are code points),
 * as the enrichment writes them.
 */
const ASPECTS = [
  "pricing",
  "stability",
  "performance",
  "sync",
  "support",
  "search",
  "export",
  "onboarding",
  "ui",
  "mobile app",
  "integrations",
  "documentation",
  "security",
  "offline mode",
  "web clipper",
  "templates",
  "collaboration",
  "notifications",
  "api",
  "billing portal",
  "dark mode",
  "tagging",
  "import",
  "editor",
  "calendar view",
  "keyboard shortcuts",
  "backups",
  "sharing",
  "attachments",
  "markdown",
];
const PLATFORMS: [string, number][] = [
  ["reddit", 0.4],
  ["hackernews", 0.25],
  ["github", 0.15],
  ["web", 0.1],
  ["twitter", 0.1],
];
const SAY = {
  complaint: ["is broken", "keeps failing", "is far too slow", "is a mess", "makes me want to cancel", "is frustrating"],
  praise: ["is excellent", "works great", "is fast and reliable", "is a joy to use", "saved us hours", "is the best part"],
  request: ["should get an option to filter", "needs a bulk mode", "could use a keyboard toggle"],
  neutral: ["changed last week", "is in the settings", "came up in the meeting"],
} as const;
export type Side = keyof typeof SAY;

export interface Row {
  id: string;
  parent: number | null;
  parentId: string | null;
  platform: string;
  kind: "source" | "comment";
  content: string;
  publishedAt: string;
  units: { start: number; end: number; text: string; aspect: string | null; sentiment: number; label: string; kind: string }[];
}

function pickWeighted<T>(rand: () => number, items: [T, number][]): T {
  let r = rand();
  for (const [item, w] of items) {
    r -= w;
    if (r < 0) return item;
  }
  return (items.at(-1) as [T, number])[0];
}

/** Zipf over the aspect list (s = 1.1). */
function zipfPicker(rand: () => number, n: number) {
  const weights = Array.from({ length: n }, (_, i) => 1 / (i + 1) ** 1.1);
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const w of weights) {
    sum += w / total;
    cumulative.push(sum);
  }
  return () => {
    const r = rand();
    const i = cumulative.findIndex((c) => r < c);
    return i === -1 ? n - 1 : i;
  };
}

/** `count` originals of one entity over the last `days` days (a fifth of them comments on earlier sources). */
export function generateRows(seed: number, count: number, days: number, name: string, tilt: Record<string, Side> = {}): Row[] {
  const rand = mulberry32(seed);
  const aspectAt = zipfPicker(rand, ASPECTS.length);
  const now = Date.now();
  const rows: Row[] = [];
  const sources: number[] = [];
  for (let i = 0; i < count; i++) {
    const isComment = sources.length > 10 && rand() < 0.2;
    const parent = isComment ? (sources[Math.floor(rand() * sources.length)] as number) : null;
    if (parent === null) sources.push(i);
    // More recent originals are more frequent: age = days × r².
    const age = days * rand() ** 2;
    const platform = parent === null ? pickWeighted(rand, PLATFORMS) : (rows[parent] as Row).platform;
    const sentences: string[] = [];
    const units: Row["units"] = [];
    let offset = 0;
    const add = (text: string, unit: Omit<Row["units"][number], "start" | "end" | "text"> | null) => {
      if (sentences.length > 0) offset += 1; // the joining space
      if (unit) units.push({ ...unit, start: offset, end: offset + text.length, text });
      sentences.push(text);
      offset += text.length;
    };
    const n = 1 + Math.floor(rand() * 4);
    for (let u = 0; u < n; u++) {
      const aspect = ASPECTS[aspectAt()] as string;
      const leaning = tilt[aspect];
      const side =
        leaning && rand() < 0.6
          ? leaning
          : pickWeighted<Side>(rand, [
              ["complaint", 0.35],
              ["praise", 0.35],
              ["request", 0.1],
              ["neutral", 0.2],
            ]);
      const phrases = SAY[side];
      const text = `The ${aspect} ${phrases[Math.floor(rand() * phrases.length)]} (${name} note ${i}.${u}).`;
      const strength = Math.round((0.2 + rand() * 0.8) * 1000) / 1000;
      const sentiment = side === "complaint" ? -strength : side === "praise" ? strength : 0;
      add(text, {
        aspect,
        sentiment,
        label: side === "complaint" ? "negative" : side === "praise" ? "positive" : "neutral",
        kind: side === "request" ? "request" : "opinion",
      });
    }
    if (rand() < 0.4)
      add(`Posted from my desk on day ${Math.floor(age)}.`, { aspect: null, sentiment: 0, label: "neutral", kind: "opinion" });
    rows.push({
      id: randomUUID(),
      parent,
      parentId: parent === null ? null : (rows[parent] as Row).id,
      platform,
      kind: parent === null ? "source" : "comment",
      content: sentences.join(" "),
      publishedAt: new Date(now - age * 86_400_000).toISOString(),
      units,
    });
  }
  return rows;
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/**
 * Inserts rows (content, then opinion units) in batches through json_to_recordset, as enriched rows,
 * stored and enriched now, or (`storedAtPublication`) at their publication time.
 */
export async function insertRows(
  client: pg.PoolClient,
  entity: { id: string; workspaceId: string },
  rows: Row[],
  options: { batch?: number; storedAtPublication?: boolean } = {},
) {
  const batch = options.batch ?? 2000;
  for (let i = 0; i < rows.length; i += batch) {
    const slice = rows.slice(i, i + batch);
    const content = slice.map((r) => ({
      id: r.id,
      parent_id: r.parentId,
      kind: r.kind,
      platform: r.platform,
      external_id: r.id,
      url: r.kind === "source" ? `https://example.com/${r.platform}/${r.id}` : "",
      content: r.content,
      author: `author-${r.id.slice(0, 6)}`,
      published_at: r.publishedAt,
      content_hash: sha256(r.content),
      dedup_key: `bench:${r.id}`,
    }));
    await client.query(
      `INSERT INTO content_store (id, entity_id, workspace_id, parent_id, kind, platform, external_id, url, content, author,
         published_at, content_hash, dedup_key, created_at)
       SELECT r.id, $1::uuid, $2::uuid, r.parent_id, r.kind, r.platform, r.external_id, r.url, r.content, r.author,
         r.published_at, r.content_hash, r.dedup_key, CASE WHEN $4::boolean THEN r.published_at ELSE now() END
       FROM json_to_recordset($3::json) AS r(id uuid, parent_id uuid, kind text, platform text, external_id text, url text,
         content text, author text, published_at timestamptz, content_hash text, dedup_key text)`,
      [entity.id, entity.workspaceId, JSON.stringify(content), options.storedAtPublication ?? false],
    );
    await client.query(
      `INSERT INTO content_enrichment (content_id, entity_id, platform, created_at, embedding_model, enriched_at)
       SELECT c.id, c.entity_id, c.platform, c.created_at, 'local-hashing-v1', c.created_at
       FROM content_store c WHERE c.id = ANY($1::uuid[])`,
      [slice.map((r) => r.id)],
    );
    const units = slice.flatMap((r) =>
      r.units.map((u) => ({
        content_id: r.id,
        start_offset: u.start,
        end_offset: u.end,
        text: u.text,
        aspect: u.aspect,
        sentiment: u.sentiment,
        sentiment_label: u.label,
        kind: u.kind,
      })),
    );
    await client.query(
      `INSERT INTO opinion_units (id, content_id, entity_id, start_offset, end_offset, text, aspect, sentiment, sentiment_label, kind,
         terms, analyser_version)
       SELECT gen_random_uuid(), u.content_id, $1::uuid, u.start_offset, u.end_offset, u.text, u.aspect, u.sentiment, u.sentiment_label,
         u.kind, CASE WHEN u.aspect IS NULL THEN ARRAY[]::text[] ELSE ARRAY[u.aspect] END, 2
       FROM json_to_recordset($2::json) AS u(content_id uuid, start_offset int, end_offset int, text text, aspect text,
         sentiment real, sentiment_label text, kind text)`,
      [entity.id, JSON.stringify(units)],
    );
  }
}
