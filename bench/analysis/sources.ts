import { performance } from "node:perf_hooks";
import type pg from "pg";

/**
 * Every source behind an insight (`GET /agent/v1/analysis/{id}/insights/{n}/sources`), timed over HTTP
 * for the analyses bench/analysis/index.ts ran: pages of 50 for the insight stating the most sources and
 * for the one stating the fewest, most representative and newest first, the first page and a page past
 * the analysed sample (where a scope larger than the sample is read from its units). Also checks what
 * the pages say: every listed source once, the count stated and the sample's size.
 */
export interface InsightRef {
  id: number;
  title: string;
  sources: number;
  sources_url: string;
}

interface Page {
  total: number;
  sample: number;
  listed: number | null;
  sources: { content_id: string; in_sample: boolean }[];
  next_cursor: string | null;
}

export interface SourcesTiming {
  request: string;
  times: number[];
}

const PAGE = 50;

async function get(base: string, token: string, url: string): Promise<{ ms: number; page: Page }> {
  const started = performance.now();
  const res = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
  const page = (await res.json()) as Page;
  return { ms: performance.now() - started, page };
}

const withQuery = (url: string, query: Record<string, string>) => `${url}?${new URLSearchParams(query)}`;

/**
 * A cursor deep in the list: most representative first, past the analysed sample's sources (the next
 * page is read from the scope's units); newest first, the eleventh page. Null when the list ends before.
 */
async function deepCursor(base: string, token: string, url: string, sort: string): Promise<string | null> {
  let cursor: string | null = null;
  for (let pages = 1; pages <= 200; pages++) {
    const { page }: { page: Page } = await get(base, token, withQuery(url, { sort, limit: String(PAGE), ...(cursor ? { cursor } : {}) }));
    cursor = page.next_cursor;
    if (!cursor) return null;
    if (sort === "newest" ? pages >= 10 : page.sources.some((s) => !s.in_sample)) return cursor;
  }
  return cursor;
}

/** The insights of an analysis worth timing: the one stating the most sources and the one stating the fewest. */
export function widestAndNarrowest(insights: InsightRef[]): [string, InsightRef][] {
  if (insights.length === 0) return [];
  const sorted = [...insights].sort((a, b) => b.sources - a.sources);
  return [
    ["most sources", sorted[0] as InsightRef],
    ["fewest sources", sorted.at(-1) as InsightRef],
  ];
}

export async function timeSources(base: string, token: string, picks: [string, InsightRef][], runs: number): Promise<SourcesTiming[]> {
  const out: SourcesTiming[] = [];
  for (const [which, insight] of picks) {
    for (const sort of ["representative", "newest"]) {
      const first = withQuery(insight.sources_url, { sort, limit: String(PAGE) });
      const times: number[] = [];
      let head: Page | undefined;
      for (let run = 0; run < runs; run++) {
        const { ms, page } = await get(base, token, first);
        times.push(ms);
        head = page;
      }
      const seen = new Set(head?.sources.map((s) => s.content_id));
      if (seen.size !== head?.sources.length) throw new Error(`${first}: a source listed twice`);
      const label = `${which} (${insight.sources.toLocaleString("en")} stated, ${head?.sample.toLocaleString("en")} in the sample)`;
      out.push({ request: `insight sources, ${label}, ${sort}, first page of ${PAGE}`, times });
      const cursor = await deepCursor(base, token, insight.sources_url, sort);
      if (!cursor) continue;
      const deep = withQuery(insight.sources_url, { sort, limit: String(PAGE), cursor });
      const deepTimes: number[] = [];
      for (let run = 0; run < runs; run++) deepTimes.push((await get(base, token, deep)).ms);
      const where = sort === "newest" ? "the eleventh page" : "a page past the sample";
      out.push({ request: `insight sources, ${label}, ${sort}, ${where}`, times: deepTimes });
    }
  }
  return out;
}

/** Sources of the theme few units name (`rareTheme`). */
export const RARE_SOURCES = 300;

/**
 * A theme few of a large scope's units name, which the analyses of this synthetic corpus never report
 * (every aspect in it is said by 1 % of the sources or more): RARE_SOURCES originals naming "quill nib",
 * stored in the entity with their opinion units (set-based, as scale.ts copies; every trigger on), spread
 * over the corpus's two years, and an analysis stating the theme with none of them in its sample (its
 * result and its theme row written as the runner writes them). Its sources are read by name
 * (opinion_units_names_idx), where a walk of the scope's units would read most of them to fill a page.
 */
export async function rareTheme(pool: pg.Pool, entityId: string, scopeSources: number): Promise<InsightRef> {
  const name = "quill nib";
  const stored = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM opinion_units WHERE entity_id = $1 AND aspect = $2", [
    entityId,
    name,
  ]);
  if ((stored.rows[0]?.n ?? 0) < RARE_SOURCES) {
    await pool.query(
      `INSERT INTO content_store (id, entity_id, workspace_id, kind, platform, url, title, content, author, published_at, content_hash,
                                  dedup_key, created_at)
       SELECT gen_random_uuid(), e.id, e.workspace_id, 'source', 'reddit', 'https://feedback.example.com/rare/' || g.i, 'Quill nib ' || g.i,
              'The quill nib keeps snagging on the page, every time. ' || g.i, 'rare' || g.i,
              timestamptz '2026-11-01' - (g.i * 2) * interval '1 day', md5('rare:' || g.i), 'rare:' || g.i, timestamptz '2026-11-01'
       FROM entities e CROSS JOIN generate_series(1, $2::int) AS g(i) WHERE e.id = $1
       ON CONFLICT DO NOTHING`,
      [entityId, RARE_SOURCES],
    );
    await pool.query(
      `INSERT INTO opinion_units (id, content_id, entity_id, start_offset, end_offset, text, aspect, sentiment, sentiment_label, kind, terms,
                                  analyser_version)
       SELECT gen_random_uuid(), c.id, c.entity_id, 0, 52, 'The quill nib keeps snagging on the page, every time.', $2, -0.6, 'negative', 'opinion', ARRAY[$2],
              (SELECT max(analyser_version) FROM opinion_units WHERE entity_id = $1)
       FROM content_store c WHERE c.entity_id = $1 AND c.dedup_key LIKE 'rare:%'
       ON CONFLICT DO NOTHING`,
      [entityId, name],
    );
    await pool.query("ANALYZE opinion_units");
  }
  const insight = {
    id: 1,
    title: `Quill nib — complaints (${RARE_SOURCES} sources)`,
    summary: "A theme few sources name (bench).",
    sentiment: "negative",
    confidence: 0.5,
    evidence: [],
    aspect: name,
    polarity: "complaint",
    sources: RARE_SOURCES,
  };
  const analysis = await pool.query<{ id: string }>(
    `INSERT INTO analyses (id, user_id, workspace_id, entity_id, question, status, depth, result, finished_at)
     SELECT gen_random_uuid(), a.user_id, a.workspace_id, a.entity_id, 'A theme few sources name (bench)', 'completed', 'deep',
            jsonb_build_object('status', 'completed', 'data', jsonb_build_object('insights', jsonb_build_array($2::jsonb))), now()
     FROM analyses a WHERE a.entity_id = $1 AND a.status = 'completed' ORDER BY a.created_at DESC LIMIT 1
     RETURNING id`,
    [entityId, JSON.stringify(insight)],
  );
  const id = analysis.rows[0]?.id as string;
  await pool.query(
    `INSERT INTO analysis_themes (analysis_id, insight, aspect, side, focus, phrases, sources, sample_sources, entity_ids, platforms,
                                  exclude_first_party, as_of, scope_sources)
     VALUES ($1, 1, $2, 'complaint', '', ARRAY[$2], $3, 0, ARRAY[$4::uuid], NULL, false, now(), $5)`,
    [id, name, RARE_SOURCES, entityId, scopeSources],
  );
  return { id: 1, title: insight.title, sources: RARE_SOURCES, sources_url: `/agent/v1/analysis/${id}/insights/1/sources` };
}
