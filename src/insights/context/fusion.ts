/**
 * Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009): each ranking contributes
 * 1 / (k + rank) for every item it holds, rank counting from 1. An item found by only
 * one ranking still scores, so a keyword-only or a vector-only match is never lost.
 */
export const RRF_K = 60;

export interface Fused {
  id: string;
  score: number;
  /** 1-based rank in each input ranking, or null where the item is absent. */
  ranks: (number | null)[];
}

export function fuseRankings(rankings: readonly (readonly string[])[], k = RRF_K): Fused[] {
  const byId = new Map<string, Fused>();
  rankings.forEach((ranking, which) => {
    ranking.forEach((id, index) => {
      let entry = byId.get(id);
      if (!entry) {
        entry = { id, score: 0, ranks: rankings.map(() => null) };
        byId.set(id, entry);
      }
      if (entry.ranks[which] !== null) return; // a ranking lists an item once; ignore repeats
      entry.ranks[which] = index + 1;
      entry.score += 1 / (k + index + 1);
    });
  });
  const best = (f: Fused) => Math.min(...f.ranks.map((r) => r ?? Number.POSITIVE_INFINITY));
  return [...byId.values()].sort((a, b) => b.score - a.score || best(a) - best(b) || (a.id < b.id ? -1 : 1));
}
