import { ASPECT_LEXICON } from "../enrichment/aspect-lexicon.js";
import { OVERALL } from "../enrichment/aspects.js";
import type { OpinionSpan } from "../enrichment/opinions.js";

/**
 * What the themes stage asks of the aspects it groups statements by: the corpus's topics
 * (topics/aspects.ts) or, for a churn question nothing answers, the nearest signals (focus.ts).
 * General aspects of enrichment's lexicon keep their display names here ("Pricing", "Login & account").
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
