import type { GoldSentence, Polarity } from "./data/convert.js";

/**
 * Reading the themes of an analysis result and scoring them against the gold sentences.
 *
 * The reader is tolerant of the result's shape: themes are `data.themes` when present,
 * else `data.insights`; a theme's title is `title` (or `name`, `label`); its polarity is
 * a `polarity` field when present, else its `sentiment` field, else read from its title
 * and summary, in the gold labels' words either way ("positive", "praise" → positive;
 * "negative", "complaint" → negative; "mixed", "split", or both → mixed; "neutral",
 * "without strong sentiment" → neutral; any other stated value, such as a feature
 * request, stays as it is and agrees with no gold polarity); its evidence is every
 * content id it quotes, through `evidence`, `quotes` or `citations` items (objects with a
 * `content_id`, or numbers into `data.evidence`), each content id counted once.
 */
export interface ThemeRead {
  title: string;
  polarity: string | null;
  polarityFrom: "polarity field" | "sentiment field" | "title/summary" | "none";
  contentIds: string[];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v : undefined);

export function polarityFromText(text: string): string | null {
  const t = text.toLowerCase();
  if (/\bmixed\b|\bsplit\b/.test(t)) return "mixed";
  const positive = /\bpositive\b|\bprais/.test(t);
  const negative = /\bnegative\b|\bcomplain/.test(t);
  if (positive && !negative) return "positive";
  if (negative && !positive) return "negative";
  if (positive && negative) return "mixed";
  if (/\bneutral\b|without strong sentiment/.test(t)) return "neutral";
  return null;
}

/** A stated polarity in the gold labels' words ("praise" → positive, "complaint" → negative); any other value as it is. */
export function normalisePolarity(value: string): string {
  return polarityFromText(value) ?? value.trim().toLowerCase();
}

export function readThemes(data: unknown): ThemeRead[] {
  if (!isObject(data)) return [];
  const list = Array.isArray(data.themes) ? data.themes : Array.isArray(data.insights) ? data.insights : [];
  const byNumber = new Map<number, string>();
  for (const e of Array.isArray(data.evidence) ? data.evidence : []) {
    if (isObject(e) && typeof e.number === "number" && str(e.content_id)) byNumber.set(e.number, e.content_id as string);
  }
  return list.filter(isObject).map((theme) => {
    const title = str(theme.title) ?? str(theme.name) ?? str(theme.label) ?? "(untitled)";
    let polarity: string | null = null;
    let polarityFrom: ThemeRead["polarityFrom"] = "none";
    if (str(theme.polarity)) {
      polarity = normalisePolarity(theme.polarity as string);
      polarityFrom = "polarity field";
    } else if (str(theme.sentiment)) {
      polarity = normalisePolarity(theme.sentiment as string);
      polarityFrom = "sentiment field";
    } else {
      polarity = polarityFromText(`${title} ${str(theme.summary) ?? ""}`);
      if (polarity) polarityFrom = "title/summary";
    }
    const ids: string[] = [];
    for (const key of ["evidence", "quotes", "citations"]) {
      const items = theme[key];
      if (!Array.isArray(items)) continue;
      for (const item of items) {
        const id =
          typeof item === "number"
            ? byNumber.get(item)
            : isObject(item)
              ? (str(item.content_id) ?? byNumber.get(item.number as number))
              : undefined;
        if (id && !ids.includes(id)) ids.push(id);
      }
    }
    return { title, polarity, polarityFrom, contentIds: ids };
  });
}

export type GoldPolarity = Polarity | "mixed";

export interface ThemeScore {
  title: string;
  evidence: number;
  /** Evidence that maps to no gold sentence (not expected: every stored row is one). */
  unmatched: number;
  category: string;
  categoryShare: number;
  /** The majority gold polarity of the evidence: "mixed" when positive and negative tie, else every tied label. */
  goldPolarity: GoldPolarity[];
  polarity: string | null;
  polarityFrom: ThemeRead["polarityFrom"];
  agrees: boolean;
}

export interface Group {
  category: string;
  polarity: Polarity;
  sentences: number;
  share: number;
  covered: boolean;
}

export interface ThemeQuality {
  themes: ThemeScore[];
  purityWeighted: number;
  purityUnweighted: number;
  polarityAgreement: number;
  coverage: number;
  groups: Group[];
}

/** Groups holding at least this share of the sentences are the ones coverage asks for. */
export const GROUP_MIN_SHARE = 0.03;

function majority<T>(values: T[]): { top: T[]; count: number } {
  const counts = new Map<T, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  const count = Math.max(0, ...counts.values());
  return { top: [...counts].filter(([, n]) => n === count).map(([v]) => v), count };
}

/**
 * Per theme: its majority gold category (ties to the one quoted first) and that
 * category's share of its evidence (purity), the majority gold polarity of its evidence
 * and whether the theme's own polarity is it: when positive and negative tie for the
 * majority the evidence is "mixed"; on any other tie each tied label agrees.
 * A (category, polarity) group is covered when a theme's majority category and its own
 * polarity are that group's.
 */
export function scoreThemes(read: ThemeRead[], goldByContentId: Map<string, GoldSentence>, all: GoldSentence[]): ThemeQuality {
  const themes: ThemeScore[] = read
    .map((theme) => {
      const gold = theme.contentIds.map((id) => goldByContentId.get(id)).filter((g): g is GoldSentence => g !== undefined);
      const categories = majority(gold.map((g) => g.category));
      const polarities = majority(gold.map((g) => g.polarity));
      const goldPolarity: GoldPolarity[] =
        polarities.top.includes("positive") && polarities.top.includes("negative") ? ["mixed"] : polarities.top;
      return {
        title: theme.title,
        evidence: gold.length,
        unmatched: theme.contentIds.length - gold.length,
        category: categories.top[0] ?? "-",
        categoryShare: gold.length === 0 ? 0 : categories.count / gold.length,
        goldPolarity,
        polarity: theme.polarity,
        polarityFrom: theme.polarityFrom,
        agrees: theme.polarity !== null && (goldPolarity as string[]).includes(theme.polarity),
      };
    })
    .filter((t) => t.evidence > 0);

  const totalEvidence = themes.reduce((sum, t) => sum + t.evidence, 0);
  const purityWeighted = totalEvidence === 0 ? 0 : themes.reduce((sum, t) => sum + t.categoryShare * t.evidence, 0) / totalEvidence;
  const purityUnweighted = themes.length === 0 ? 0 : themes.reduce((sum, t) => sum + t.categoryShare, 0) / themes.length;
  const polarityAgreement = themes.length === 0 ? 0 : themes.filter((t) => t.agrees).length / themes.length;

  const counts = new Map<string, { category: string; polarity: Polarity; n: number }>();
  for (const s of all) {
    const key = `${s.category}\u0000${s.polarity}`;
    const entry = counts.get(key) ?? { category: s.category, polarity: s.polarity, n: 0 };
    entry.n++;
    counts.set(key, entry);
  }
  const groups: Group[] = [...counts.values()]
    .filter((g) => g.n / all.length >= GROUP_MIN_SHARE)
    .sort((a, b) => b.n - a.n || a.category.localeCompare(b.category))
    .map((g) => ({
      category: g.category,
      polarity: g.polarity,
      sentences: g.n,
      share: g.n / all.length,
      covered: themes.some((t) => t.category === g.category && t.polarity === g.polarity),
    }));
  const coverage = groups.length === 0 ? 0 : groups.filter((g) => g.covered).length / groups.length;
  return { themes, purityWeighted, purityUnweighted, polarityAgreement, coverage, groups };
}
