import type { Db } from "../../platform/db.js";

/**
 * Which words of a plain recall query are worth matching on. PostgreSQL's statistics on
 * `pages.search_vector` (kept by ANALYZE/autovacuum) list the most common lexemes with
 * the share of pages holding each. A word whose lexemes are all in more than
 * COMMON_TERM_SHARE of pages says little about which page is meant, yet joined with
 * `or` it makes nearly every page a candidate to rank; so such words only order the
 * candidates (pages holding every word rank first) unless nothing rarer was asked for.
 * Without statistics (a new or small table) every word counts.
 */
export const COMMON_TERM_SHARE = 0.2;
const STATS_TTL_MS = 10 * 60_000;

export class CommonTerms {
  private cached: { at: number; share: Map<string, number> } | undefined;

  constructor(
    private readonly db: Db,
    private readonly threshold = COMMON_TERM_SHARE,
  ) {}

  /** The words to match on, in their order: stop words and (when rarer ones exist) common words dropped. */
  async informative(words: readonly string[]): Promise<string[]> {
    if (words.length <= 1) return [...words];
    const share = await this.shares();
    const rows = await this.db.$queryRaw<{ word: string; lexemes: string[] }[]>`
      SELECT w.word, ARRAY(SELECT lexeme FROM unnest(to_tsvector('english', w.word))) AS lexemes
      FROM unnest(${[...words]}::text[]) WITH ORDINALITY AS w(word, n) ORDER BY w.n`;
    const scored = rows
      .filter((r) => r.lexemes.length > 0)
      .map((r) => ({ word: r.word, share: Math.min(...r.lexemes.map((l) => share.get(l) ?? 0)) }));
    const kept = scored.filter((s) => s.share <= this.threshold);
    if (kept.length > 0) return kept.map((s) => s.word);
    const rarest = scored.reduce<(typeof scored)[number] | undefined>((best, s) => (!best || s.share < best.share ? s : best), undefined);
    return rarest ? [rarest.word] : [...words];
  }

  private async shares(): Promise<Map<string, number>> {
    if (this.cached && Date.now() - this.cached.at < STATS_TTL_MS) return this.cached.share;
    const rows = await this.db.$queryRaw<{ lexeme: string; share: number }[]>`
      SELECT u.lexeme, u.share::float8 AS share
      FROM pg_stats s, unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS u(lexeme, share)
      WHERE s.schemaname = current_schema() AND s.tablename = 'pages' AND s.attname = 'search_vector'
        AND u.lexeme IS NOT NULL`;
    const share = new Map(rows.map((r) => [r.lexeme, r.share]));
    this.cached = { at: Date.now(), share };
    return share;
  }
}
