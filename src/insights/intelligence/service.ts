import { entityForUser } from "../../access/workspaces/access.js";
import type { Db } from "../../platform/db.js";
import { aspectLabel } from "../analysis/aspect-mining.js";
import { isSplit } from "../analysis/themes.js";
import { ANALYSER_VERSION } from "../enrichment/opinions.js";
import {
  type CompetitorGap,
  type Counts,
  type IntelligenceSummary,
  type PlatformSummary,
  type Polarity,
  type Quote,
  SIDES,
  type Side,
  type SummaryQuery,
  type Theme,
} from "./schemas.js";
import { type AspectRow, aspectCounts, latestCoverage, platformCounts, type QuoteTarget, quoteCandidates, type Windows } from "./sql.js";

/**
 * The intelligence summary of an entity: computed on every request from what is stored (no
 * analysis runs, nothing is invented), by SQL aggregation over the precomputed opinion units of
 * the entity's originals in two windows, the stored originals per platform and the latest
 * coverage records.
 *
 * - Themes: aspects that at least MIN_THEME_SOURCES distinct originals of the current window name,
 *   most originals first, each with its polarity (the side more of its originals take, `mixed`
 *   when the smaller side is at least a third of both, as the analysis engine splits themes), its
 *   originals per side and one or two verbatim quotes from different originals.
 * - Changes: against the previous window, by originals and by share of the window's originals
 *   with opinion units (so a busier window alone does not make a theme grow).
 * - Competitor gaps: aspects where the entity and one of its company's competitors are discussed
 *   with opposite polarity in the current window (complaints on one side, praise on the other),
 *   each side with at least MIN_THEME_SOURCES originals.
 */
const DAY_MS = 86_400_000;
export const MIN_THEME_SOURCES = 2;
export const MAX_THEMES = 10;
const MAX_CHANGES = 10;
const MAX_GAPS = 10;
const MAX_COMPETITORS = 20;
const QUOTE_CANDIDATES = 12;

export const BASIS: Record<string, string> = {
  counts: "Every count is of stored originals (a source or a comment is one original each), never of people or accounts.",
  windows:
    "An original is in the window its publication time falls in, or its storage time when it has none; the previous window is the same length just before the current one.",
  sources:
    "A theme's sources are the distinct originals of the window whose opinion units name the aspect; an original that says several things about it counts once per side it takes.",
  statements: "Statements are opinion units (clauses of the originals), several per original possible.",
  share: "share = a theme's sources / the window's originals that have opinion units.",
  polarity:
    "complaint or praise: the side more of the theme's originals take; mixed: both sides, the smaller at least a third of them; request: only wishes and feature requests; neutral: mentions without a judgement.",
  changes:
    "new: named by no original in the previous window and by at least 2 now; growing: at least 2 more originals, 1.5 times as many and a larger share than before; fading: at most half as many originals (from at least 2) and a smaller share.",
  competitor_gaps:
    "An aspect the entity and a competitor are discussed with opposite polarity about in the current window, each side by at least 2 originals.",
  coverage:
    "The latest coverage record of each platform, whoever recorded it: only exhaustive proves the collector read everything in its scope.",
  quotes: "Quotes are opinion units whose text is exactly the original's text at their offsets (code points).",
};

export type EntityRow = Awaited<ReturnType<typeof entityForUser>>;

interface AspectStats {
  counts: Counts;
  sources: number;
  statements: number;
}

interface WindowStats {
  aspects: Map<string, AspectStats>;
  withUnits: number;
  statements: number;
  olderAnalyser: number;
}

const emptyCounts = (): Counts => ({ complaint: 0, praise: 0, request: 0, neutral: 0 });
const emptyWindow = (): WindowStats => ({ aspects: new Map(), withUnits: 0, statements: 0, olderAnalyser: 0 });
const round3 = (x: number) => Math.round(x * 1000) / 1000;

export function polarityOf(counts: Counts): Polarity {
  if (counts.complaint + counts.praise === 0) return counts.request > 0 ? "request" : "neutral";
  if (isSplit({ ...counts })) return "mixed";
  return counts.complaint > counts.praise ? "complaint" : counts.praise > counts.complaint ? "praise" : "mixed";
}

export function changeOf(current: number, previous: number, currentShare: number, previousShare: number): Theme["change"] {
  if (previous === 0 && current >= MIN_THEME_SOURCES) return "new";
  if (previous > 0 && current >= previous + 2 && current >= 1.5 * previous && currentShare > previousShare) return "growing";
  if (previous >= MIN_THEME_SOURCES && current <= previous / 2 && currentShare < previousShare) return "fading";
  return "steady";
}

/** Aggregated rows → per entity, per window, the aspects' stats. */
function statsByEntity(rows: AspectRow[], excluded: Set<string>): Map<string, { current: WindowStats; previous: WindowStats }> {
  const out = new Map<string, { current: WindowStats; previous: WindowStats }>();
  for (const row of rows) {
    let entity = out.get(row.entity_id);
    if (!entity) {
      entity = { current: emptyWindow(), previous: emptyWindow() };
      out.set(row.entity_id, entity);
    }
    const win = row.current ? entity.current : entity.previous;
    if (row.level === 0) {
      win.withUnits += row.sources;
      win.statements += row.statements;
      continue;
    }
    if (row.level === 3) {
      if (Number(row.aspect) < ANALYSER_VERSION) win.olderAnalyser += row.statements;
      continue;
    }
    if (excluded.has(row.aspect.toLowerCase())) continue;
    const stats = win.aspects.get(row.aspect) ?? { counts: emptyCounts(), sources: 0, statements: 0 };
    if (row.level === 1) {
      stats.sources += row.sources;
      stats.statements += row.statements;
    } else if ((SIDES as readonly string[]).includes(row.side)) {
      stats.counts[row.side as Side] += row.sources;
    }
    win.aspects.set(row.aspect, stats);
  }
  return out;
}

/** The sides a theme of this polarity quotes, in order. */
const quotedSides = (polarity: Polarity): Side[] =>
  polarity === "mixed"
    ? ["complaint", "praise"]
    : polarity === "complaint" || polarity === "praise" || polarity === "request"
      ? [polarity]
      : ["neutral"];

async function competitorsOf(db: Db, entity: EntityRow): Promise<EntityRow[]> {
  if (entity.kind === "competitor") return [];
  let companyId: string | null = entity.kind === "company" ? entity.id : null;
  if (!companyId && entity.parentEntityId) {
    const parent = await db.entity.findFirst({ where: { id: entity.parentEntityId, workspaceId: entity.workspaceId, kind: "company" } });
    companyId = parent?.id ?? null;
  }
  if (!companyId) return [];
  return db.entity.findMany({
    where: { parentEntityId: companyId, workspaceId: entity.workspaceId, kind: "competitor", NOT: { id: entity.id } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: MAX_COMPETITORS,
  });
}

export async function intelligenceSummary(db: Db, userId: string, query: SummaryQuery): Promise<IntelligenceSummary> {
  return summaryOfEntity(db, await entityForUser(db, userId, query.entity_id), query.window_days);
}

/** The summary of an entity the caller was already allowed to read (a member's request, or a share link's page). */
export async function summaryOfEntity(db: Db, entity: EntityRow, windowDays: number): Promise<IntelligenceSummary> {
  const query = { window_days: windowDays };
  const competitors = await competitorsOf(db, entity);
  const end = new Date();
  const w: Windows = {
    end,
    currentStart: new Date(end.getTime() - query.window_days * DAY_MS),
    previousStart: new Date(end.getTime() - 2 * query.window_days * DAY_MS),
  };
  const entityIds = [entity.id, ...competitors.map((c) => c.id)];
  const [platformRows, aspectRows, coverageRows] = await Promise.all([
    platformCounts(db, entity.id, w),
    aspectCounts(db, entityIds, w),
    latestCoverage(db, entity.id),
  ]);
  // The tracked entities' own names are not themes ("Acme is great" is about everything).
  const excluded = new Set([entity, ...competitors].map((e) => e.name.toLowerCase()));
  const stats = statsByEntity(aspectRows, excluded);
  const own = stats.get(entity.id) ?? { current: emptyWindow(), previous: emptyWindow() };
  const shareOf = (sources: number, win: WindowStats) => (win.withUnits === 0 ? 0 : round3(sources / win.withUnits));

  // Themes of the current window.
  const themeBase = [...own.current.aspects.entries()]
    .filter(([, s]) => s.sources >= MIN_THEME_SOURCES)
    .sort(([a, x], [b, y]) => y.sources - x.sources || y.statements - x.statements || a.localeCompare(b))
    .slice(0, MAX_THEMES)
    .map(([aspect, s]) => {
      const previous = own.previous.aspects.get(aspect)?.sources ?? 0;
      const share = shareOf(s.sources, own.current);
      return {
        aspect,
        label: aspectLabel(aspect),
        polarity: polarityOf(s.counts),
        sources: s.sources,
        share,
        counts: s.counts,
        statements: s.statements,
        previous_sources: previous,
        change: changeOf(s.sources, previous, share, shareOf(previous, own.previous)),
      };
    });

  // Changes across every aspect of either window.
  const aspects = new Set([...own.current.aspects.keys(), ...own.previous.aspects.keys()]);
  const changeItems = [...aspects].map((aspect) => {
    const cur = own.current.aspects.get(aspect);
    const prev = own.previous.aspects.get(aspect);
    const current = cur?.sources ?? 0;
    const previous = prev?.sources ?? 0;
    const item = {
      aspect,
      label: aspectLabel(aspect),
      polarity: polarityOf((cur ?? prev)?.counts ?? emptyCounts()),
      current_sources: current,
      previous_sources: previous,
      current_share: shareOf(current, own.current),
      previous_share: shareOf(previous, own.previous),
    };
    return { item, change: changeOf(current, previous, item.current_share, item.previous_share) };
  });
  const changed = (kind: Theme["change"], key: "current_sources" | "previous_sources") =>
    changeItems
      .filter((c) => c.change === kind)
      .map((c) => c.item)
      .sort((a, b) => b[key] - a[key] || a.aspect.localeCompare(b.aspect))
      .slice(0, MAX_CHANGES);

  // Competitor gaps: opposite polarity on one aspect in the current window.
  type GapBase = Omit<CompetitorGap, "company" | "competitor"> & {
    company: Omit<CompetitorGap["company"], "quote">;
    competitor: Omit<CompetitorGap["competitor"], "quote">;
  };
  const gapBase: GapBase[] = [];
  const gapSide = (e: EntityRow, s: AspectStats) => ({
    entity_id: e.id,
    name: e.name,
    polarity: polarityOf(s.counts),
    sources: s.sources,
    counts: s.counts,
  });
  for (const competitor of competitors) {
    const theirs = stats.get(competitor.id)?.current.aspects ?? new Map<string, AspectStats>();
    for (const [aspect, mine] of own.current.aspects) {
      const other = theirs.get(aspect);
      if (!other) continue;
      const a = polarityOf(mine.counts);
      const b = polarityOf(other.counts);
      const opposite = (a === "complaint" && b === "praise") || (a === "praise" && b === "complaint");
      if (!opposite || mine.counts[a] < MIN_THEME_SOURCES || other.counts[b] < MIN_THEME_SOURCES) continue;
      gapBase.push({
        aspect,
        label: aspectLabel(aspect),
        direction: a === "complaint" ? "competitor_ahead" : "company_ahead",
        company: gapSide(entity, mine),
        competitor: gapSide(competitor, other),
      });
    }
  }
  gapBase.sort(
    (x, y) =>
      Math.min(y.company.sources, y.competitor.sources) - Math.min(x.company.sources, x.competitor.sources) ||
      x.aspect.localeCompare(y.aspect) ||
      x.competitor.name.localeCompare(y.competitor.name),
  );
  const gaps = gapBase.slice(0, MAX_GAPS);

  // Quotes: a few candidates per (entity, aspect, side), then distinct originals.
  const targets: QuoteTarget[] = [];
  const targetIndex = new Map<string, number>();
  const want = (t: QuoteTarget) => {
    const key = `${t.entityId}\u0000${t.aspect}\u0000${t.side}`;
    if (!targetIndex.has(key)) {
      targetIndex.set(key, targets.length);
      targets.push(t);
    }
    return targetIndex.get(key) as number;
  };
  const themeTargets = themeBase.map((t) => quotedSides(t.polarity).map((side) => want({ entityId: entity.id, aspect: t.aspect, side })));
  const gapTargets = gaps.map((g) => [
    want({ entityId: entity.id, aspect: g.aspect, side: g.company.polarity as Side }),
    want({ entityId: g.competitor.entity_id, aspect: g.aspect, side: g.competitor.polarity as Side }),
  ]);
  // Each entity's statements in the current window decide how its quotes are read (quoteCandidates).
  const windowUnits = new Map(entityIds.map((id) => [id, stats.get(id)?.current.statements ?? 0]));
  const candidates = await quoteCandidates(db, targets, w, QUOTE_CANDIDATES, windowUnits);
  const byTarget = new Map<number, Quote[]>();
  for (const row of candidates) {
    const list = byTarget.get(row.target) ?? [];
    const side = (targets[row.target] as QuoteTarget).side;
    list.push({
      content_id: row.content_id,
      opinion_unit_id: row.id,
      quote: row.text,
      start: row.start_offset,
      end: row.end_offset,
      side,
      sentiment: round3(row.sentiment),
      platform: row.platform,
      url: row.url,
      author: row.author,
      published_at: row.published_at?.toISOString() ?? null,
    });
    byTarget.set(row.target, list);
  }
  /** Up to `n` quotes from the targets, from different originals, taking from each target in turn. */
  const pick = (indexes: number[], n: number): Quote[] => {
    const out: Quote[] = [];
    const used = new Set<string>();
    const queues = indexes.map((i) => [...(byTarget.get(i) ?? [])]);
    while (out.length < n && queues.some((q) => q.length > 0)) {
      for (const q of queues) {
        while (q.length > 0) {
          const next = q.shift() as Quote;
          if (used.has(next.content_id)) continue;
          used.add(next.content_id);
          out.push(next);
          break;
        }
        if (out.length >= n) break;
      }
    }
    return out;
  };
  const themes: Theme[] = themeBase.map((t, i) => ({ ...t, quotes: pick(themeTargets[i] as number[], 2) }));
  const competitorGaps: CompetitorGap[] = gaps.map((g, i) => {
    const [mine, theirs] = gapTargets[i] as [number, number];
    return {
      ...g,
      company: { ...g.company, quote: pick([mine], 1)[0] ?? null },
      competitor: { ...g.competitor, quote: pick([theirs], 1)[0] ?? null },
    };
  });

  // Platforms: counts per window and the latest coverage.
  const platformNames = new Set([...entity.platforms, ...platformRows.map((r) => r.platform), ...coverageRows.map((r) => r.collector)]);
  const platforms: PlatformSummary[] = [...platformNames].map((platform) => {
    const count = (current: boolean) => {
      const row = platformRows.find((r) => r.platform === platform && r.current === current);
      return { sources: row?.sources ?? 0, comments: row?.comments ?? 0 };
    };
    const cov = coverageRows.find((r) => r.collector === platform);
    return {
      platform,
      current: count(true),
      previous: count(false),
      coverage: cov
        ? {
            coverage_state: cov.coverage_state,
            proven: cov.coverage_state === "exhaustive",
            run_id: cov.run_id,
            collection_scope: cov.collection_scope,
            query: cov.query,
            started_at: cov.started_at,
            finished_at: cov.finished_at,
            recorded_at: cov.updated_at.toISOString(),
            targets: cov.targets,
            targets_read_to_end: cov.targets_read_to_end,
            items_found: cov.items_found,
            items_stored: cov.items_stored,
          }
        : null,
    };
  });
  platforms.sort(
    (a, b) => b.current.sources + b.current.comments - (a.current.sources + a.current.comments) || a.platform.localeCompare(b.platform),
  );
  const total = (key: "current" | "previous", win: WindowStats) => ({
    sources: platforms.reduce((n, p) => n + p[key].sources, 0),
    comments: platforms.reduce((n, p) => n + p[key].comments, 0),
    with_opinion_units: win.withUnits,
    opinion_units: win.statements,
  });
  const totals = { current: total("current", own.current), previous: total("previous", own.previous) };

  const limitations: string[] = [];
  const withoutUnits = totals.current.sources + totals.current.comments - totals.current.with_opinion_units;
  if (withoutUnits > 0) {
    limitations.push(
      `${withoutUnits} original(s) of the current window have no opinion units, so no theme counts them: not enriched yet (POST /api/sweeps/run enriches them), without an opinion, or not evidence (a meeting note's own row).`,
    );
  }
  const older = own.current.olderAnalyser + own.previous.olderAnalyser;
  if (older > 0) {
    limitations.push(
      `${older} opinion unit(s) were written by an older version of the opinion analyser; their aspects and polarity may be read differently from newer units.`,
    );
  }
  if (themes.length === 0) limitations.push(`No aspect is named by at least ${MIN_THEME_SOURCES} originals of the current window.`);
  const unproven = platforms.filter((p) => p.coverage?.coverage_state !== "exhaustive").map((p) => p.platform);
  if (unproven.length > 0) {
    limitations.push(`Coverage is not proven exhaustive for: ${unproven.join(", ")}; counts there are what was stored, not all there is.`);
  }
  if (competitors.length === 0) {
    limitations.push(
      entity.kind === "competitor"
        ? "Competitor gaps are read from the company's side: this entity is itself a competitor."
        : "No competitor is tracked for this entity's company, so there are no competitor gaps.",
    );
  }

  return {
    entity_id: entity.id,
    entity: { id: entity.id, name: entity.name, kind: entity.kind },
    window_days: query.window_days,
    windows: {
      current: { start: w.currentStart.toISOString(), end: w.end.toISOString() },
      previous: { start: w.previousStart.toISOString(), end: w.currentStart.toISOString() },
    },
    totals,
    platforms,
    themes,
    changes: {
      new: changed("new", "current_sources"),
      growing: changed("growing", "current_sources"),
      fading: changed("fading", "previous_sources"),
    },
    competitors: competitors.map((c) => ({ id: c.id, name: c.name, sources: stats.get(c.id)?.current.withUnits ?? 0 })),
    competitor_gaps: competitorGaps,
    limitations,
    basis: BASIS,
    generated_at: end.toISOString(),
  };
}
