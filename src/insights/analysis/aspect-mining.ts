import { ASPECT_LEXICON } from "../enrichment/aspect-lexicon.js";
import { OVERALL } from "../enrichment/aspects.js";
import type { OpinionSpan } from "../enrichment/opinions.js";
import { stem } from "./text.js";

/**
 * Corpus-level aspects, after Hu & Liu (2004, "Mining and summarizing customer reviews"):
 * each unit names its aspects best first (lexicon aspects, noun phrases); across the
 * analysed sources, a noun phrase mentioned by at least `minSupport` sources is a
 * frequent aspect. Phrases sharing a head noun group under that head when the head is
 * also said on its own (its p-support: "shortcut" with "markdown shortcut" and "keyboard
 * shortcut"), named after the member most sources use; a head never said alone does not
 * swallow its phrases ("dark mode" and "reading mode" stay apart, no "Mode" theme). The
 * tracked entities' own names never name an aspect. A unit without an opinion counts
 * toward an aspect only when the aspect is established (in the lexicon, or frequent):
 * a neutral passing noun is not something people talk about.
 */
export interface MinedUnit extends Pick<OpinionSpan, "aspect" | "terms" | "kind" | "label"> {
  contentId: string;
}

export interface AspectModel {
  /** The aspect a unit counts toward, or null. */
  aspectOf: (unit: MinedUnit) => string | null;
  /** Display name of an aspect ("Pricing", "Web clipper"). */
  label: (aspect: string) => string;
  /** Distinct sources behind a mined phrase (after grouping). */
  support: (aspect: string) => number;
  minSupport: number;
  /** Every name stored units may carry for the aspect (a topic's phrases), when there are several. */
  phrasesOf?: (aspect: string) => string[];
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
export const isLexiconAspect = (aspect: string) => Object.hasOwn(ASPECT_LEXICON, aspect);

export function aspectLabel(aspect: string): string {
  if (aspect === OVERALL) return "Overall";
  return ASPECT_LEXICON[aspect]?.label ?? capitalise(aspect);
}

/**
 * Words about the feedback rather than the product: the vocabulary of issue trackers and their
 * templates. A phrase made only of them ("feature request", "the code", "this report") is no aspect.
 */
const FEEDBACK_WORDS = new Set([
  "feature",
  "features",
  "request",
  "requests",
  "issue",
  "issues",
  "bug",
  "bugs",
  "problem",
  "problems",
  "report",
  "reports",
  "ticket",
  "tickets",
  "code",
  "example",
  "examples",
  "snippet",
  "version",
  "versions",
  "solution",
  "solutions",
  "behavior",
  "behaviour",
  "context",
  "description",
  "step",
  "steps",
  "reproduction",
  "repro",
  "screenshot",
  "screenshots",
  "log",
  "logs",
  "output",
  "template",
  "pr",
  "pull",
  "question",
  "questions",
  "answer",
  "thing",
  "things",
  "way",
  "case",
  "idea",
  "suggestion",
  "proposal",
  "enhancement",
  "workaround",
  "info",
  "information",
  "detail",
  "details",
  "expected",
  "actual",
  "result",
]);

export function mineAspects(units: MinedUnit[], entityNames: string[], sourceCount: number): AspectModel {
  const nameWords = new Set(entityNames.flatMap((n) => n.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).flatMap((w) => [w, stem(w)]));
  const minSupport = Math.max(2, Math.ceil(0.01 * sourceCount));

  /**
   * A unit's term without the tracked entities' names ("acme dashboard" → "dashboard"); null if
   * nothing is left, or only words about the feedback itself ("feature request", "code", "report").
   */
  const clean = (term: string): string | null => {
    if (term === OVERALL || isLexiconAspect(term)) return term;
    const words = term.split(" ").filter((w) => !nameWords.has(w) && !nameWords.has(stem(w)));
    if (words.every((w) => FEEDBACK_WORDS.has(w))) return null;
    return words.length > 0 ? words.join(" ") : null;
  };
  const candidatesOf = (u: MinedUnit) => {
    const raw = u.terms.length > 0 ? u.terms : u.aspect ? [u.aspect] : [];
    return raw.map(clean).filter((t): t is string => t !== null);
  };

  // Sources per phrase, and per head said on its own.
  const sourcesOf = new Map<string, Set<string>>();
  const add = (key: string, source: string) => {
    const set = sourcesOf.get(key) ?? new Set<string>();
    set.add(source);
    sourcesOf.set(key, set);
  };
  for (const u of units) for (const t of candidatesOf(u)) if (t !== OVERALL && !isLexiconAspect(t)) add(t, u.contentId);
  const groupOf = new Map<string, string>();
  const heads = new Map<string, string[]>();
  for (const phrase of sourcesOf.keys()) {
    const head = phrase.split(" ").at(-1)!;
    if (sourcesOf.has(head)) heads.set(head, [...(heads.get(head) ?? []), phrase]);
  }
  for (const [head, members] of heads) {
    const sources = new Set(members.flatMap((m) => [...(sourcesOf.get(m) ?? [])]));
    if (members.length < 2 || sources.size < minSupport) continue;
    const top = [...members].sort((a, b) => (sourcesOf.get(b)?.size ?? 0) - (sourcesOf.get(a)?.size ?? 0) || a.localeCompare(b))[0]!;
    const name = (sourcesOf.get(top)?.size ?? 0) >= 0.6 * sources.size ? top : head;
    for (const m of members) groupOf.set(m, name);
  }
  const grouped = new Map<string, Set<string>>();
  for (const [phrase, sources] of sourcesOf) {
    const name = groupOf.get(phrase) ?? phrase;
    grouped.set(name, new Set([...(grouped.get(name) ?? []), ...sources]));
  }
  const canonical = (t: string) => (t === OVERALL || isLexiconAspect(t) ? t : (groupOf.get(t) ?? t));
  const support = (aspect: string) => grouped.get(aspect)?.size ?? 0;
  const established = (aspect: string) => isLexiconAspect(aspect) || support(aspect) >= minSupport;

  const aspectOf = (u: MinedUnit): string | null => {
    const candidates = candidatesOf(u).map(canonical);
    const opinion = u.kind === "request" || u.kind === "bug" || u.label !== "neutral";
    if (!opinion) return candidates.find((c) => c !== OVERALL && established(c)) ?? null;
    return candidates.find((c) => c !== OVERALL) ?? (u.aspect === OVERALL || candidates.length === 0 ? OVERALL : null);
  };
  return { aspectOf, label: aspectLabel, support, minSupport };
}

/**
 * The words a theme's statements use for a lexicon aspect, most used first ("price",
 * "expensive", "dollar"), so a summary shows what a broad aspect gathers.
 */
export function surfaceTerms(aspect: string, texts: string[], max = 3): string[] {
  const entry = ASPECT_LEXICON[aspect];
  if (!entry) return [];
  const forms = [...entry.terms, ...(entry.cues ?? [])].map((w) => ({ w, form: w.replace(/-/g, " ") }));
  const counts = new Map<string, number>();
  for (const text of texts) {
    const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    const grams = new Set<string>();
    for (let i = 0; i < words.length; i++) {
      for (let n = 1; n <= 3 && i + n <= words.length; n++) {
        const gram = words.slice(i, i + n).join(" ");
        grams.add(gram);
        grams.add(gram.replace(/(?:es|s|ed|ing)$/u, ""));
      }
    }
    for (const { w, form } of forms) if (grams.has(form)) counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([w]) => w);
  // "offline" says nothing "offline mode" does not.
  const within = (w: string, other: string) => other !== w && ` ${other} `.includes(` ${w} `);
  return ranked.filter((w) => !ranked.some((other) => within(w, other))).slice(0, max);
}
