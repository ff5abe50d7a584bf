import { readFileSync } from "node:fs";
import { join } from "node:path";
import { mulberry32 } from "../../recall/corpus.js";

/**
 * Labelled issues whose maintainers group them by area or component (not by kind), for judging
 * themes the way a maintainer would. Each repository names its area labels its own way; a label is an
 * area when it matches the repository's rule below (kind, priority, status and platform labels are
 * not areas). Issues with no area label take no part in purity or coverage.
 */
export interface AreaIssue {
  id: string;
  repo: string;
  title: string;
  body: string;
  areas: string[];
}

const RAW = join(import.meta.dirname, "..", "feedback", "data", "raw", "issues");

/** Which labels of each repository are areas. */
export const AREA_RULES: Readonly<Record<string, (label: string) => boolean>> = {
  "rust-lang/rust": (l) => /^A-/.test(l),
  "neovim/neovim": (l) =>
    !/^(?:bug|bug-\w+|enhancement|closed:.*|needs:.*|has:.*|complexity:.*|status:.*|platform:.*|good first issue|help wanted|performance|defaults)$/.test(
      l,
    ),
  "TokTok/c-toxcore": (l) => ["network", "messenger", "toxav", "crypto", "security", "bootstrap", "file transfers"].includes(l),
  "matomo-org/matomo": (l) => /^c: /.test(l),
  "cython/cython": (l) =>
    !["support question", "defect", "enhancement", "feature", "help wanted", "good first issue", "performance", "unclear"].includes(l) &&
    !/^[RP]: /.test(l),
};

/** Development repositories (tuned on) and test repositories (reported once). */
export const AREA_SPLITS = {
  dev: ["neovim/neovim", "rust-lang/rust", "TokTok/c-toxcore"],
  test: ["matomo-org/matomo", "cython/cython"],
} as const;

export function readAreaIssues(repo: string): AreaIssue[] {
  const rule = AREA_RULES[repo];
  if (!rule) throw new Error(`no area rule for ${repo}`);
  const file = join(RAW, `${repo.replace("/", "__")}.jsonl`);
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { number: number; title: string; body: string | null; labels: string[] })
    .map((i) => ({ id: `${repo}#${i.number}`, repo, title: i.title, body: i.body ?? "", areas: i.labels.filter(rule) }));
}

export interface AreaScore {
  /** Themes with at least 3 area-labelled sources. */
  judged: number;
  /** Mean share of a judged theme's labelled sources in its majority area. */
  purity: number;
  /** Share of the corpus's areas (with at least `minAreaIssues` issues) that are the majority of some judged theme. */
  coverage: number;
  areas: number;
}

export const MIN_THEME_SOURCES = 3;
export const MIN_AREA_ISSUES = 5;

/** Purity and coverage of themes given as sets of source ids. */
export function scoreAreas(themes: readonly (readonly string[])[], areasOf: ReadonlyMap<string, readonly string[]>): AreaScore {
  const areaSize = new Map<string, number>();
  for (const areas of areasOf.values()) for (const a of areas) areaSize.set(a, (areaSize.get(a) ?? 0) + 1);
  const counted = [...areaSize].filter(([, n]) => n >= MIN_AREA_ISSUES).map(([a]) => a);
  const majorities = new Set<string>();
  const purities: number[] = [];
  for (const sources of themes) {
    const labelled = sources.filter((s) => (areasOf.get(s)?.length ?? 0) > 0);
    if (labelled.length < MIN_THEME_SOURCES) continue;
    const byArea = new Map<string, number>();
    for (const s of labelled) for (const a of areasOf.get(s) ?? []) byArea.set(a, (byArea.get(a) ?? 0) + 1);
    const [area, n] = [...byArea].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]!;
    purities.push(n / labelled.length);
    majorities.add(area);
  }
  return {
    judged: purities.length,
    purity: purities.length === 0 ? 0 : purities.reduce((a, b) => a + b, 0) / purities.length,
    coverage: counted.length === 0 ? 0 : counted.filter((a) => majorities.has(a)).length / counted.length,
    areas: counted.length,
  };
}

/** A seeded pseudo-random generator, so the random baseline repeats. */
export const seeded = mulberry32;

/** Random themes of the same sizes as `themes`, drawn from `ids` (mean of `runs` draws is taken by the caller). */
export function randomLike(themes: readonly (readonly string[])[], ids: readonly string[], random: () => number): string[][] {
  return themes.map((t) => {
    const pool = [...ids];
    const out: string[] = [];
    for (let i = 0; i < t.length && pool.length > 0; i++) out.push(pool.splice(Math.floor(random() * pool.length), 1)[0]!);
    return out;
  });
}
