import type { Db } from "../../platform/db.js";
import type { InsightItem } from "./schemas.js";
import type { ThemeSourceItem } from "./theme-sources-schemas.js";
import type { Listed } from "./theme-sources-scope.js";

/**
 * The listed sources of an insight as their originals are now (theme-sources-read.ts pages them).
 */
/** The number of the insight's quote from each source it quotes (its first). */
export function evidenceNumbers(insight: InsightItem): Map<string, number> {
  const numbers = new Map<string, number>();
  for (const e of insight.evidence ?? []) if (!numbers.has(e.content_id)) numbers.set(e.content_id, e.number);
  return numbers;
}

type OriginalRow = {
  id: string;
  title: string;
  platform: string;
  author: string;
  published_at: Date | null;
  url: string;
  feedback_kind: string | null;
  quote: string | null;
};

/**
 * The listed sources as they are now: each original's fields and its statement's words (the stored
 * original between the span's code-point offsets), or, for one gone since, why and when from its tombstone.
 */
export async function describe(db: Db, workspaceId: string, listed: Listed[], numbers: Map<string, number>): Promise<ThemeSourceItem[]> {
  if (listed.length === 0) return [];
  const ids = listed.map((l) => l.contentId);
  const originals = await db.$queryRaw<OriginalRow[]>`
    SELECT c.id, c.title, c.platform, c.author, c.published_at, c.url, e.feedback_kind,
      CASE WHEN s.start_offset IS NULL THEN NULL ELSE substr(c.content, s.start_offset + 1, s.end_offset - s.start_offset) END AS quote
    FROM unnest(${ids}::uuid[], ${listed.map((l) => l.start)}::int[], ${listed.map((l) => l.end)}::int[]) AS s(id, start_offset, end_offset)
    JOIN content_store c ON c.id = s.id AND c.workspace_id = ${workspaceId}::uuid
    LEFT JOIN content_enrichment e ON e.content_id = c.id`;
  const byId = new Map(originals.map((o) => [o.id, o]));
  const gone = ids.filter((id) => !byId.has(id));
  const tombstones =
    gone.length === 0
      ? []
      : await db.$queryRaw<{ content_id: string; platform: string; reason: string; deleted_at: Date }[]>`
          SELECT content_id, platform, reason, deleted_at FROM content_deletions WHERE content_id = ANY(${gone}::uuid[])`;
  const tombstoneOf = new Map(tombstones.map((t) => [t.content_id, t]));
  const now = new Date().toISOString();
  return listed.map((l): ThemeSourceItem => {
    const original = byId.get(l.contentId);
    const t = original ? undefined : tombstoneOf.get(l.contentId);
    return {
      content_id: l.contentId,
      title: original?.title ?? "",
      platform: original?.platform ?? t?.platform ?? "",
      author: original?.author ?? "",
      published_at: original?.published_at?.toISOString() ?? null,
      url: original?.url ?? "",
      feedback_kind: original?.feedback_kind ?? null,
      quote: original?.quote ?? "",
      start_offset: l.start ?? 0,
      end_offset: l.end ?? 0,
      opinion_unit_id: original ? l.unitId : null,
      in_sample: l.rank !== null,
      evidence_number: numbers.get(l.contentId) ?? null,
      // Gone since the analysis ran: why and when, and none of its words.
      ...(original ? {} : { unavailable: { reason: (t?.reason ?? "deleted") as Reason, at: t?.deleted_at.toISOString() ?? now } }),
    };
  });
}

type Reason = NonNullable<ThemeSourceItem["unavailable"]>["reason"];
