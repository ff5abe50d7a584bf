import { lexiconAspect, namedLexiconAspect } from "../enrichment/aspects.js";
import { tokenize } from "../enrichment/tokens.js";
import { stem, terms } from "./text.js";

/**
 * What a question asks for: complaints, praise, requests (any mix; none of them means
 * "what do people think", which reads as all three), and the aspects it names ("pricing",
 * "the dashboard"). Plain word lists, deterministic.
 */
export interface QuestionIntent {
  complaints: boolean;
  praise: boolean;
  requests: boolean;
  /** Lexicon aspects the question names ("How is the pricing?" → pricing). */
  aspects: string[];
  /** The question's remaining content words (stems), e.g. "dashboard": a question about something specific. */
  topicTerms: string[];
  /**
   * What kind of statement answers it, when it asks for one kind: feature requests, bugs, reasons
   * to leave or switch, comparisons with alternatives, or getting started. Null for a general
   * question (complaints and praise are answered by polarity, as before).
   */
  ask: "requests" | "bugs" | "churn" | "comparison" | "updates" | "onboarding" | null;
  /** It asks what people talk about ("What do users talk about most?", "What are the main topics?"), not what they think. */
  topics?: boolean;
}

/** Words of a question about what is talked about, rather than how it is judged. */
const TOPIC_QUESTION =
  /\b(?:talk(?:s|ed|ing)? about|discuss\w*|mention\w*|bring(?:s|ing)? up|rais(?:e|es|ed|ing)|topics?|themes?|subjects?)\b/i;

/** Stems without a final "e", so "like", "liked" and "likes" meet ("like" is too short for `stem`). */
const base = (w: string) => stem(w).replace(/e$/, "");
const stems = (words: string) => new Set(words.split(" ").map(base));
const COMPLAINT_WORDS = stems(
  "complaint complain complaining problem issue pain painpoint dislike hate negative wrong bad worst frustrate frustrating annoy annoying criticism criticize criticise critic weakness weak con downside churn cancel fail bug gripe concern struggle hurt broken improve fix blocker unhappy angry",
);
const PRAISE_WORDS = stems(
  "like love praise positive good best enjoy appreciate strength strong pro upside favorite favourite happy satisfied satisfy delight work great well win",
);
const REQUEST_WORDS = stems("request wish want missing miss ask asking feature roadmap add need idea suggestion suggest lack");
/** Words of a question that name neither an intent nor a topic. */
const FRAME_WORDS = stems(
  "people user customer folk someone anyone think say said feel felt biggest big main top most common overall general opinion view sentiment feedback review reviewer experience product app thing what which who whom whose why how much many really actually about tell know us we our me my mention talk report reported reporting raise raised",
);

/** Phrases of each kind of focused question, checked in this order (leaving before comparing, …). */
const ASKS: [NonNullable<QuestionIntent["ask"]>, RegExp][] = [
  [
    "churn",
    /\b(?:churn\w*|switch\w*|leav(?:e|es|ing)|left|quit\w*|give up|gave up|giving up|cancel\w*|uninstall\w*|stop(?:ped)? using|abandon\w*|drop(?:ped)? (?:it|us|the)|move (?:away|to)|moving (?:away|to)|unsubscrib\w*)\b/i,
  ],
  [
    "comparison",
    /\b(?:compar\w*|alternatives?|competitors?|rivals?|versus|vs\.?|better than|worse than|instead of|other (?:tools|apps|products|options))\b/i,
  ],
  [
    "updates",
    /\b(?:after (?:the |an? |this |recent |latest |last |new )*(?:updates?|upgrades?|releases?|versions?)|since (?:the |an? |this |recent |latest |last )*(?:updates?|upgrades?|releases?)|(?:recent|latest|last|new) (?:updates?|upgrades?|releases?|versions?)|regressions?)\b/i,
  ],
  [
    "bugs",
    /\b(?:bugs?|broke|broken|break(?:s|ing)?|crash\w*|errors?|regressions?|defects?|glitch\w*|fail(?:s|ed|ing|ures?)?|not working|doesn'?t work|stopped working|issues? (?:reported|do|are))\b/i,
  ],
  [
    "requests",
    /\b(?:requests?|requested|feature requests?|wish\w*|want(?:s|ed)?|missing|roadmap|asks? for|asking for|ask\w* to add|would like|should (?:we|they) (?:add|build)|features? (?:do|are|would))\b/i,
  ],
  [
    "onboarding",
    /\b(?:onboard\w*|set ?up|getting started|get started|first[- ]time|install(?:ation|ing)?|sign(?:ing)? ?up|learning curve|new users?)\b/i,
  ],
];

/** The kind of statement a question asks for, if it asks for one. */
export function askOf(question: string): QuestionIntent["ask"] {
  for (const [ask, pattern] of ASKS) if (pattern.test(question)) return ask;
  return null;
}

const matches = (words: Set<string>, stemmed: string[]) =>
  stemmed.map((w) => w.replace(/e$/, "")).some((w) => words.has(w) || [...words].some((p) => p.length >= 5 && w.startsWith(p)));

export function questionIntent(question: string, entityNames: string[] = []): QuestionIntent {
  // The words that ask for a kind of statement ("bugs", "request") name no aspect or topic of their
  // own (getting started is itself an aspect).
  const ask = askOf(question);
  const pattern = ask && ask !== "onboarding" ? ASKS.find(([a]) => a === ask)?.[1] : undefined;
  const unasked = pattern ? question.replace(new RegExp(pattern.source, "gi"), " ") : question;
  const words = terms(question);
  let complaints = matches(COMPLAINT_WORDS, words);
  let praise = matches(PRAISE_WORDS, words);
  let requests = matches(REQUEST_WORDS, words);
  if (!complaints && !praise && !requests) complaints = praise = requests = true;

  const lower = unasked.toLowerCase().normalize("NFKC");
  const tokens = lower.match(/[\p{L}\p{N}$][\p{L}\p{N}'-]*/gu) ?? [];
  const aspects = new Set<string>();
  const verbs = new Set((tokenize(unasked.replace(/\s+/g, " ").trim()) ?? []).filter((t) => t.pos === "VERB").map((t) => t.normal));
  for (let n = 3; n >= 1; n--) {
    for (let i = 0; i + n <= tokens.length; i++) {
      const phrase = tokens.slice(i, i + n).join(" ");
      // An aspect's own terms, or a cue that is no verb: "too expensive" asks about pricing, "run into" is no
      // performance question.
      const cue = n === 1 && !verbs.has(phrase) ? lexiconAspect(phrase) : null;
      const found = namedLexiconAspect(phrase) ?? (phrase.endsWith("s") ? namedLexiconAspect(phrase.slice(0, -1)) : null) ?? cue;
      if (found) aspects.add(found);
    }
  }
  const names = new Set(entityNames.flatMap(terms));
  const aspectWords = new Set([...aspects].flatMap(terms));
  const topicTerms = terms(unasked).filter(
    (w) =>
      !names.has(w) &&
      !aspectWords.has(w) &&
      !matches(FRAME_WORDS, [w]) &&
      !matches(COMPLAINT_WORDS, [w]) &&
      !matches(PRAISE_WORDS, [w]) &&
      !matches(REQUEST_WORDS, [w]),
  );
  // Getting started is a focus of its own only when the question names no other aspect.
  const focused = ask === "onboarding" && [...aspects].some((a) => a !== "onboarding") ? null : ask;
  const topics = TOPIC_QUESTION.test(question);
  return { complaints, praise, requests, aspects: [...aspects], topicTerms, ask: focused, topics };
}
