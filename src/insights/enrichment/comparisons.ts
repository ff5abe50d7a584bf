/**
 * Comparisons, switching and avoidance in one clause of feedback about a tracked product. A
 * comparison names both sides: "Obsidian is much better than this" is a complaint about the product
 * and praise for Obsidian, which is recorded as what the product was compared with; "this beats
 * Notion" is praise. Switching and avoidance ("switched to Bear", "stay away", "best avoided",
 * "uninstalled", "cancelled my subscription") are complaints and churn signals. A rival praised on
 * its own ("X seems to be the fastest") says nothing good about the product. Expressions over the
 * clause's text; a name is a capitalised word or two (or a quoted or code-marked name).
 */
export interface ComparisonReading {
  /** The other product the clause compares the tracked one with, as written. */
  comparedWith: string | null;
  /** The tracked product comes out worse (-1), better (+1), or the clause praises only the rival (0). */
  verdict: -1 | 0 | 1 | null;
  /** The author leaves, left, or tells others to stay away. */
  churn: boolean;
}

/** A pattern's words in either case at their first letter, and in any case after it ("This", "this", "THIS"). */
const ci = (pattern: string) => pattern.replace(/\\.|[a-z]/g, (c) => (c.length === 1 ? `[${c}${c.toUpperCase()}]` : c));
const NAME = String.raw`((?:[A-Z][\w.+#-]*|[a-z]+[A-Z][\w.+#-]*)(?:\s(?:[A-Z0-9][\w.+#-]*))?|"[^"]{2,40}"|\x60[^\x60]{2,40}\x60)`;
const SELF = ci("(?:this|it|that|this one|this app|this tool|this product|this thing|the app|yours|your app|your product)");
const MORE = ci(String.raw`(?:(?:much|way|far|so much|a lot|a bit|slightly|miles|definitely|clearly|still|even)\s+)*`);
const BETTER = ci(
  "(?:better|faster|nicer|cheaper|easier|simpler|smoother|cleaner|superior|more (?:reliable|stable|intuitive|polished|powerful|capable|usable|responsive))",
);
const WORSE = ci("(?:worse|slower|clunkier|harder|uglier|buggier|pricier|inferior|more (?:expensive|complicated|confusing|buggy|limited))");
const BE = ci("(?:is|are|was|were|seems|seem|feels|feel|looks|works|runs|'s|’s)");

const RIVAL_BETTER = [
  new RegExp(String.raw`${NAME}\s+${BE}?\s*${MORE}${BETTER}\s+than\s+${SELF}\b`),
  new RegExp(String.raw`\b${SELF}\s+${BE}\s+${MORE}${WORSE}\s+${ci("than")}\s+${NAME}`),
  new RegExp(String.raw`\b${ci("(?:prefer|go with|stick (?:with|to)|recommend)")}\s+${NAME}\s+${ci("(?:over|instead of|to)")}\s+${SELF}\b`),
  new RegExp(String.raw`\b${NAME}\s+(?:does|did|handles|handled)\s+(?:this|it|that)\s+${MORE}better\b`),
];
const SELF_BETTER = [
  new RegExp(String.raw`\b${SELF}\s+${BE}\s+${MORE}${BETTER}\s+${ci("than")}\s+${NAME}`),
  new RegExp(String.raw`\b${SELF}\s+${ci("(?:beats|outperforms|blows away|crushes)")}\s+${NAME}`),
  new RegExp(String.raw`\b${ci(String.raw`(?:switched|moved|migrated|came over)\s+(?:here\s+)?from`)}\s+${NAME}`),
];
const SWITCH_AWAY = new RegExp(
  String.raw`\b${ci(String.raw`(?:switch(?:ed|ing)?|mov(?:ed|ing)|migrat(?:ed|ing)|went back|going back|go back|changed|jump(?:ed|ing) ship)\s+(?:over\s+|back\s+|away\s+)?to`)}\s+${NAME}`,
);
const RIVAL_ALONE = new RegExp(
  String.raw`^\W*(?:${ci("according to")} [^,]+,\s*)?${NAME}\s+${BE}?\s*(?:to be\s+)?(?:the\s+)?(?:${MORE})(?:best|fastest|cheapest|easiest|winner|clear winner|superior)\b`,
);
const CHURN = new RegExp(
  [
    String.raw`\bstay(?:ing)? (?:far )?away\b`,
    String.raw`\bbest avoided\b`,
    String.raw`\bavoid (?:this|it|at all costs)\b`,
    String.raw`\bun-?install(?:ed|ing)?\b`,
    String.raw`\bdelet(?:ed|ing) (?:the|this) app\b`,
    String.raw`\bcancell?(?:ed|ing)? (?:my |our |the )?(?:subscription|account|plan|membership|order)\b`,
    String.raw`\b(?:looking|look) for (?:an? )?(?:alternative|replacement)s?\b`,
    String.raw`\b(?:don'?t|do not) (?:waste your|bother)\b`,
    String.raw`\b(?:i'?m|i am|we'?re|we are) (?:leaving|done with|out)\b`,
    String.raw`\b(?:asked for|want(?:ed)?|request(?:ed)?) (?:a |my )?refund\b`,
    String.raw`\bnot (?:renewing|coming back)\b`,
    String.raw`\bwill not (?:renew|be renewing|use (?:it|this) again)\b`,
  ].join("|"),
  "i",
);

const clean = (name: string) =>
  name
    .replace(/^["\x60]|["\x60]$/g, "")
    .replace(/[.,;:!?]+$/, "")
    .trim();
/** Words that open a clause capitalised without being a name. */
const NOT_NAMES = new Set([
  "I",
  "It",
  "This",
  "That",
  "The",
  "They",
  "We",
  "You",
  "He",
  "She",
  "There",
  "Here",
  "Nothing",
  "Everything",
  "Anything",
  "Something",
  "Overall",
  "Honestly",
  "But",
  "And",
  "Its",
  "My",
  "Our",
]);

function named(match: RegExpExecArray | null): string | null {
  const raw = match?.slice(1).find((g) => g !== undefined);
  if (!raw) return null;
  const name = clean(raw);
  return NOT_NAMES.has(name.split(/\s/)[0]!) ? null : name;
}

/**
 * Words one of the comparison expressions above needs (each holds one of them, in any case): a clause
 * without any of them is read for churn alone, without running the expressions (most clauses).
 */
const COMPARISON_WORDS =
  /than|prefer|go with|stick|recommend|better|beats|outperforms|blows away|crushes|switch|mov|migrat|came over|went back|going back|go back|changed|jump|best|fastest|cheapest|easiest|winner|superior/;

export function readComparison(text: string): ComparisonReading {
  const churn = CHURN.test(text);
  if (!COMPARISON_WORDS.test(text.toLowerCase())) return { comparedWith: null, verdict: churn ? -1 : null, churn };
  for (const pattern of RIVAL_BETTER) {
    const name = named(pattern.exec(text));
    if (name) return { comparedWith: name, verdict: -1, churn };
  }
  for (const pattern of SELF_BETTER) {
    const name = named(pattern.exec(text));
    if (name) return { comparedWith: name, verdict: 1, churn };
  }
  const away = named(SWITCH_AWAY.exec(text));
  if (away) return { comparedWith: away, verdict: -1, churn: true };
  const rival = named(RIVAL_ALONE.exec(text));
  if (rival) return { comparedWith: rival, verdict: 0, churn };
  return { comparedWith: null, verdict: churn ? -1 : null, churn };
}
