import type { Db } from "../../platform/db.js";
import type { EmbeddingProvider } from "../embed/provider.js";
import { type AnalysisScope, coversWholeEntities, isFirstParty, scopeCondition, scopeEntities } from "./scope.js";
import { TEXT_WINDOW, textRank } from "./text-rank.js";
import { vectorRank } from "./vector.js";

/**
 * Hybrid retrieval over the scope: a full-text ranking (any of the question's lexemes,
 * `ts_rank_cd` over `search_vector`, text-rank.ts) and a vector ranking (cosine to the question's
 * embedding), fused by reciprocal rank fusion (k = 60). `user_first` adds one top rank's
 * worth (1/60) to first-party rows. Provided sources are all kept, in fused order.
 */
export const RRF_K = 60;

export interface RetrievedRow {
  id: string;
  entityId: string;
  platform: string;
  kind: string;
  url: string;
  title: string;
  author: string;
  publishedAt: Date | null;
  content: string;
  /** What the original is (content_store.feedback_kind), null until enriched. */
  feedbackKind: string | null;
  /** How sure enrichment is of that kind (content_store.feedback_kind_confidence, 0–1), null until enriched. */
  feedbackKindConfidence: number | null;
  score: number;
  via: ("text" | "vector" | "provided")[];
}

export interface RetrievalResult {
  rows: RetrievedRow[];
  inScopeByPlatform: Record<string, number>;
  limitations: string[];
}

export async function retrieve(
  db: Db,
  embedder: EmbeddingProvider,
  scope: AnalysisScope,
  question: string,
  limit: number,
): Promise<RetrievalResult> {
  const condition = scopeCondition(scope);
  const limitations: string[] = [];
  // Whole entities: the sums of content_count_deltas (migration 20261129120000), not a count of their rows.
  const counts = coversWholeEntities(scope)
    ? await db.$queryRaw<{ platform: string; n: bigint }[]>`
        SELECT d.platform, sum(d.delta)::bigint AS n FROM content_count_deltas d WHERE d.entity_id IN (${scopeEntities(scope)})
        GROUP BY d.platform HAVING sum(d.delta) > 0 ORDER BY d.platform`
    : await db.$queryRaw<{ platform: string; n: bigint }[]>`
        SELECT c.platform, count(*) AS n FROM content_store c WHERE ${condition} GROUP BY c.platform ORDER BY c.platform`;
  const inScopeByPlatform = Object.fromEntries(counts.map((r) => [r.platform, Number(r.n)]));
  if (counts.length === 0) return { rows: [], inScopeByPlatform, limitations };

  const candidates = Math.max(limit * 4, 50);
  const text = await textRank(db, scope, question, candidates);
  if (text.windowed.length > 0) {
    limitations.push(
      `The question's word(s) ${text.windowed.map((w) => `'${w}'`).join(", ")} are in much of the scope, so matches of them were ranked among its ${TEXT_WINDOW.toLocaleString("en")} most recent rows (rarer words over all of it).`,
    );
  }

  let vectorIds: string[] = [];
  try {
    const [queryVector] = await embedder.embed([question]);
    const ranked = await vectorRank(db, embedder, scope, queryVector ?? [], { limit: candidates });
    vectorIds = ranked.hits.map((h) => h.id);
    if (ranked.unscored > 0) {
      limitations.push(
        `${ranked.unscored} of the scope's most recent row(s) are not enriched yet and were ranked by full-text match only.`,
      );
    }
  } catch (err) {
    limitations.push(`Vector ranking was unavailable (${(err as Error).message}); rows were ranked by full-text match only.`);
  }

  const fused = new Map<string, { score: number; via: Set<RetrievedRow["via"][number]> }>();
  const add = (ids: string[], via: RetrievedRow["via"][number]) =>
    ids.forEach((id, rank) => {
      const entry = fused.get(id) ?? { score: 0, via: new Set() };
      entry.score += 1 / (RRF_K + rank + 1);
      entry.via.add(via);
      fused.set(id, entry);
    });
  add(text.ids, "text");
  add(vectorIds, "vector");
  if (scope.contentIds) {
    // Provided rows are kept whatever their rank, but only those the scope admits (visible, and evidence).
    const admitted = new Set((await db.$queryRaw<{ id: string }[]>`SELECT c.id FROM content_store c WHERE ${condition}`).map((r) => r.id));
    add(
      scope.contentIds.filter((id) => admitted.has(id)),
      "provided",
    );
  }

  const ids = [...fused.keys()];
  if (ids.length === 0) return { rows: [], inScopeByPlatform, limitations };
  const rows = await db.content.findMany({
    where: { id: { in: ids } },
    select: {
      id: true,
      entityId: true,
      platform: true,
      kind: true,
      url: true,
      title: true,
      author: true,
      publishedAt: true,
      content: true,
      enrichment: { select: { feedbackKind: true, feedbackKindConfidence: true } },
    },
  });
  const scored = rows.map(({ enrichment, ...r }) => {
    const entry = fused.get(r.id)!;
    const boost = scope.preferFirstParty && isFirstParty(r.platform) ? 1 / RRF_K : 0;
    return {
      ...r,
      feedbackKind: enrichment?.feedbackKind ?? null,
      feedbackKindConfidence: enrichment?.feedbackKindConfidence ?? null,
      score: entry.score + boost,
      via: [...entry.via].sort(),
    };
  });
  scored.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
  const keep = scope.contentIds ? Math.max(limit, scope.contentIds.length) : limit;
  return { rows: scored.slice(0, keep), inScopeByPlatform, limitations };
}
