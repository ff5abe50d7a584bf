import { type Db, Prisma } from "../../platform/db.js";
import { type AnalysisScope, entitiesInScope, newestInScope, scopeCondition } from "./scope.js";

/**
 * The full-text half of retrieval: any of the question's lexemes, ranked by `ts_rank_cd` over
 * `search_vector`. Ranking reads every match, and a word found in much of the scope (the product's
 * own name, "like", "use") matches millions of rows of a large entity. So each lexeme's matches in
 * scope are first estimated by the planner (nothing is read); when one exceeds RANK_ALL_UP_TO:
 * - the whole question is ranked among the scope's TEXT_WINDOW most recently stored rows, read along
 *   each entity's index and merged (newestInScope), and
 * - the question's rarer lexemes are ranked over the whole scope through the GIN, by the same
 *   score, so a rare word's older matches are still found;
 * and the two are merged by score. Otherwise every match is ranked, as before.
 */
export const RANK_ALL_UP_TO = 10_000;
export const TEXT_WINDOW = 100_000;

export interface TextRanking {
  ids: string[];
  /** The lexemes ranked only within the recent window (empty when every match was ranked). */
  windowed: string[];
}

async function estimate(db: Db, scope: AnalysisScope, lexeme: string): Promise<number> {
  const rows = await db.$queryRaw<{ "QUERY PLAN": { Plan?: { "Plan Rows"?: number } }[] }[]>`
    EXPLAIN (FORMAT JSON) SELECT 1 FROM content_store c
    WHERE ${scopeCondition(scope)} AND c.search_vector @@ ${operand(lexeme)}::tsquery`;
  return Number(rows[0]?.["QUERY PLAN"]?.[0]?.Plan?.["Plan Rows"] ?? 0);
}

/** A lexeme as a tsquery operand: quoted, its quotes doubled and backslashes escaped (already normalised, so cast, not parsed). */
const operand = (lexeme: string) => `'${lexeme.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
const orQuery = (lexemes: string[]) => Prisma.sql`${lexemes.map(operand).join(" | ")}::tsquery`;

export async function textRank(
  db: Db,
  scope: AnalysisScope,
  question: string,
  candidates: number,
  /** `estimate` replaces the planner's estimate of a lexeme's matches in scope. */
  options: { rankAllUpTo?: number; window?: number; estimate?: (lexeme: string) => number } = {},
): Promise<TextRanking> {
  const rankAllUpTo = options.rankAllUpTo ?? RANK_ALL_UP_TO;
  const lexemes = (
    await db.$queryRaw<{ lexeme: string }[]>`
      SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('english', ${question}::text))) AS lexeme ORDER BY 1`
  ).map((r) => r.lexeme);
  if (lexemes.length === 0) return { ids: [], windowed: [] };
  const q = orQuery(lexemes);
  const estimates = await Promise.all(lexemes.map((l) => options.estimate?.(l) ?? estimate(db, scope, l)));
  const windowed = lexemes.filter((_, i) => estimates[i]! > rankAllUpTo);
  if (windowed.length === 0) {
    const rows = await db.$queryRaw<{ id: string }[]>`
      SELECT c.id FROM content_store c
      WHERE ${scopeCondition(scope)} AND c.search_vector @@ ${q}
      ORDER BY ts_rank_cd(c.search_vector, ${q}, 32) DESC, c.id
      LIMIT ${candidates}`;
    return { ids: rows.map((r) => r.id), windowed };
  }
  const rare = lexemes.filter((l) => !windowed.includes(l));
  const entityIds = await entitiesInScope(db, scope);
  if (entityIds.length === 0) return { ids: [], windowed };
  const recent = await db.$queryRaw<{ id: string; score: number }[]>`
    SELECT w.id, ts_rank_cd(w.search_vector, ${q}, 32)::float8 AS score
    FROM (${newestInScope(scope, entityIds, Prisma.sql`c.search_vector`, options.window ?? TEXT_WINDOW)}) w
    WHERE w.search_vector @@ ${q}
    ORDER BY score DESC, w.id
    LIMIT ${candidates}`;
  const older =
    rare.length === 0
      ? []
      : await db.$queryRaw<{ id: string; score: number }[]>`
          SELECT c.id, ts_rank_cd(c.search_vector, ${q}, 32)::float8 AS score FROM content_store c
          WHERE ${scopeCondition(scope)} AND c.search_vector @@ ${orQuery(rare)}
          ORDER BY score DESC, c.id
          LIMIT ${candidates}`;
  const best = new Map<string, number>();
  for (const r of [...recent, ...older]) best.set(r.id, Math.max(best.get(r.id) ?? 0, r.score));
  const ids = [...best.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, candidates)
    .map(([id]) => id);
  return { ids, windowed };
}
