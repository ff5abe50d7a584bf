import { OVERALL } from "../enrichment/aspects.js";
import type { AspectModel, MinedUnit } from "./aspect-mining.js";
import type { QuestionIntent } from "./question.js";
import type { RetrievedRow } from "./retrieval.js";
import { stem } from "./text.js";
import type { Unit } from "./units.js";

/**
 * What a focused question is answered from. "Which features do users request most?" is answered
 * from requests, "What bugs do users report?" from described defects, "Why do users give up or
 * switch?" from churn signals and unfavourable comparisons, "What do users like compared with
 * alternatives?" from comparisons, "How is onboarding?" from statements about getting started. Units
 * of the asked kind from sources of the matching feedback kind come first: a feature request in a
 * bug report is still a request, but a corpus of requests answers better. A general question
 * ("What do people think?") uses every unit.
 */
export type Ask = NonNullable<QuestionIntent["ask"]>;

export interface Focus {
  ask: Ask;
  /** Unit kinds and source feedback kinds that retrieval may top up with. */
  unitKinds: string[];
  feedbackKinds: string[];
  churn: boolean;
  compared: boolean;
  /** What the answer calls the units ("feature requests"), for saying plainly when there are none. */
  noun: string;
}

const ONBOARDING_ASPECTS = new Set(["onboarding", "ease of use", "documentation", "login and account"]);

export function focusOf(intent: QuestionIntent): Focus | null {
  switch (intent.ask) {
    case "requests":
      return {
        ask: "requests",
        unitKinds: ["request"],
        feedbackKinds: ["feature_request"],
        churn: false,
        compared: false,
        noun: "feature requests",
      };
    case "bugs":
      return { ask: "bugs", unitKinds: ["bug"], feedbackKinds: ["bug_report"], churn: false, compared: false, noun: "bug reports" };
    case "churn":
      return { ask: "churn", unitKinds: [], feedbackKinds: [], churn: true, compared: true, noun: "reasons to leave or switch" };
    case "comparison":
      return { ask: "comparison", unitKinds: [], feedbackKinds: [], churn: false, compared: true, noun: "comparisons with alternatives" };
    case "updates":
      return {
        ask: "updates",
        unitKinds: ["bug"],
        feedbackKinds: ["bug_report"],
        churn: false,
        compared: false,
        noun: "problems that appeared after an update",
      };
    case "onboarding":
      return {
        ask: "onboarding",
        unitKinds: [],
        feedbackKinds: [],
        churn: false,
        compared: false,
        noun: "statements about getting started",
      };
    default:
      return null;
  }
}

function matches(focus: Focus, u: Unit, model: AspectModel, sourceKind: string | null): boolean {
  switch (focus.ask) {
    case "requests":
      return u.kind === "request" || (sourceKind === "feature_request" && u.kind !== "bug");
    case "bugs":
      return u.kind === "bug" || (sourceKind === "bug_report" && u.kind !== "request");
    case "churn":
      return u.churn || (u.comparedWith !== null && u.label === "negative");
    case "comparison":
      return u.comparedWith !== null;
    case "updates":
      return AFTER_UPDATE.test(u.text) && (u.kind === "bug" || u.label === "negative" || sourceKind === "bug_report");
    case "onboarding": {
      const aspect = model.aspectOf(u);
      return (aspect !== null && ONBOARDING_ASPECTS.has(aspect)) || u.terms.some((t) => ONBOARDING_ASPECTS.has(t));
    }
  }
}

/** A statement that places a problem after a change of version ("since the last update", "used to work"). */
const AFTER_UPDATE =
  /\b(?:updat(?:e|es|ed|ing)|upgrad(?:e|es|ed|ing)|new(?:est)? (?:version|release)|latest (?:version|release)|since (?:version|release|v?\d)|regressions?|used to work|no longer works?|stopped working|broke (?:after|since|with))\b/i;

/**
 * What comes nearest to leaving when nobody says they left: going back to an older release, working
 * around a problem, or weighing another tool ("downgraded to 2.1", "as a workaround", "switched the
 * loader to X"; comparisons are read by enrichment).
 */
const NEAR_CHURN =
  /\b(?:downgrad\w*|roll(?:ed|ing)? ?back|revert(?:ed|ing)? (?:to|back)|(?:older|previous|earlier) (?:version|release)|pinn(?:ed|ing) (?:to|the)|workarounds?|work(?:ed|ing)? around|switch(?:ed|ing)? (?:over )?to|moved? (?:over )?to|migrat(?:e|ed|ing) to)\b/i;

export interface NearestSignals {
  /** What the question asked for and the sources do not hold ("reasons to leave or switch"). */
  noun: string;
  units: Unit[];
  /** The signals as themes: each statement under the kind of signal it gives. */
  model: AspectModel;
}

const SIGNALS: { key: string; label: string; test: (u: Unit) => boolean }[] = [
  {
    key: "going back to an older release",
    label: "Going back to an older release",
    test: (u) => /\b(?:downgrad\w*|roll(?:ed|ing)? ?back|revert(?:ed|ing)? (?:to|back)|(?:older|previous|earlier) (?:version|release)|pinn(?:ed|ing) (?:to|the))\b/i.test(u.text),
  },
  { key: "workarounds", label: "Workarounds", test: (u) => /\b(?:workarounds?|work(?:ed|ing)? around)\b/i.test(u.text) },
  {
    key: "comparisons with other tools",
    label: "Comparisons with other tools",
    test: (u) => u.comparedWith !== null || /\b(?:switch(?:ed|ing)? (?:over )?to|moved? (?:over )?to|migrat(?:e|ed|ing) to)\b/i.test(u.text),
  },
];

function signalModel(): AspectModel {
  const labels = new Map(SIGNALS.map((s) => [s.key, s.label]));
  return {
    aspectOf: (u) => SIGNALS.find((s) => s.test(u as Unit))?.key ?? null,
    label: (aspect) => labels.get(aspect) ?? aspect,
    support: () => 0,
    minSupport: 1,
  };
}

/**
 * For a question nothing answers, the statements that come nearest, when the question has such
 * (churn: downgrades, workarounds, comparisons with other tools); null otherwise.
 */
export function nearestSignals(focus: Focus, units: Unit[]): NearestSignals | null {
  if (focus.ask !== "churn") return null;
  const near = units.filter((u) => u.comparedWith !== null || NEAR_CHURN.test(u.text));
  return near.length === 0 ? null : { noun: focus.noun, units: near, model: signalModel() };
}

/** Fewer units than this from sources of the matching feedback kind: units of every source are used. */
const MIN_MATCHING = 3;

/** The units that answer a focused question, those of sources of the matching feedback kind first. */
export function focusedUnits(focus: Focus, units: Unit[], rows: Pick<RetrievedRow, "id" | "feedbackKind">[], model: AspectModel): Unit[] {
  const kindOf = new Map(rows.map((r) => [r.id, r.feedbackKind]));
  const asked = units.filter((u) => matches(focus, u, model, kindOf.get(u.contentId) ?? null));
  if (focus.feedbackKinds.length === 0) return asked;
  const fitting = asked.filter((u) => focus.feedbackKinds.includes(kindOf.get(u.contentId) ?? ""));
  return fitting.length >= MIN_MATCHING ? fitting : asked;
}

/**
 * How clearly each analysed source is of the feedback kind a focused question asks for: the stored
 * kind's confidence (0–1; 0 when it was stored without one) when it is one of the asked kinds, -1 for
 * a source of another kind or none yet. Undefined when the question asks for no feedback kind (churn,
 * comparisons, onboarding).
 */
export function kindFit(
  focus: Focus,
  rows: Pick<RetrievedRow, "id" | "feedbackKind" | "feedbackKindConfidence">[],
): Map<string, number> | undefined {
  if (focus.feedbackKinds.length === 0) return undefined;
  return new Map(
    rows.map((r) => [r.id, r.feedbackKind && focus.feedbackKinds.includes(r.feedbackKind) ? (r.feedbackKindConfidence ?? 0) : -1]),
  );
}

const ARTICLES = new Set(["a", "an", "the", "some", "more", "any", "my", "our", "your", "their", "its", "this", "that", "these", "those"]);
const STOP_AFTER =
  /\s(?:so|because|since|as|which|that|when|where|while|but|and then|if|for me|for us|to make|would|could|please|thanks|thank)\b/i;
const CAPABILITY =
  /\b(?:add(?:ing)?|support(?:ing)?(?: for)?|implement(?:ing)?|introduc(?:e|ing)|allow(?:ing)?(?: us| me| users)? to|enable|provide|offer|include|bring back|integrat(?:e|ion) with|option (?:to|for)|ability to|(?:be )?able to|possibility to|way to|setting (?:to|for)|feature (?:to|for)|support for|have|get|want|need|wish (?:for|there was|it had|they had|you had|i could)|(?:would|'d|’d)(?: really| so| also)? (?:love|like)(?: to see| to have)?)\s+(.{3,80})/gi;
/** Words that stand for something named before them: "please add one" names nothing. */
const PRONOUNS = new Set(["one", "it", "this", "that", "them", "these", "those", "something", "some", "more", "me", "us", "you"]);

/**
 * The capability a request asks for, in the request's own words ("PDF export" from "Could you
 * add PDF export?", "sync tags across devices" from "Please allow us to sync tags across
 * devices"): the phrase after the request's verb, up to a clause break, at most six words,
 * without leading articles. Null when the request names nothing after its verb.
 */
export function requestedCapability(text: string): string | null {
  for (const m of text.matchAll(CAPABILITY)) {
    const phrase = capabilityPhrase(m[1]!);
    if (phrase) return phrase;
  }
  return null;
}

/** Words a capability's name neither starts nor ends with ("to track e.g." names nothing yet). */
const EDGE_WORDS = new Set([
  ...ARTICLES,
  "to",
  "of",
  "for",
  "with",
  "and",
  "or",
  "in",
  "on",
  "at",
  "by",
  "from",
  "e.g",
  "eg",
  "i.e",
  "ie",
  "etc",
  "be",
  "able",
  "get",
  "make",
  "do",
  "use",
  "using",
  "possibility",
  "possible",
  "chance",
  "also",
  "just",
  "really",
  "very",
  "so",
]);
/** Common words that alone name no capability. */
const HOLLOW = new Set([
  "thing",
  "things",
  "stuff",
  "something",
  "way",
  "option",
  "feature",
  "features",
  "possibility",
  "ability",
  "support",
  "help",
  "better",
  "more",
  "new",
]);

function capabilityPhrase(after: string): string | null {
  let phrase = after
    .split(/[,;:!?()[\]"“”]|\.(?=\s|$)/)[0]!
    .replace(/^(?:support|ability|(?:an?|the) (?:option|possibility|way)|possibility|way)\s+(?:for|to|of)\s+/i, "");
  const stop = STOP_AFTER.exec(` ${phrase}`);
  if (stop) phrase = ` ${phrase}`.slice(0, stop.index).trim();
  const words = phrase.split(/\s+/).filter(Boolean).slice(0, 6);
  const edge = (w: string) => EDGE_WORDS.has(w.toLowerCase().replace(/\.$/, ""));
  while (words.length > 0 && edge(words[0]!)) words.shift();
  while (words.length > 0 && edge(words.at(-1)!)) words.pop();
  const content = words.filter((w) => /\p{L}{3,}/u.test(w) && !HOLLOW.has(w.toLowerCase()) && !PRONOUNS.has(w.toLowerCase()));
  if (content.length === 0) return null;
  return words.join(" ");
}

const capabilityKey = (phrase: string) =>
  phrase
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 2 && !ARTICLES.has(w))
    .map(stem)
    .sort()
    .join(" ");

/**
 * An aspect model under which requests are themes of the capability they ask for: requests that
 * name the same capability (the same content words) form one theme, named by the phrase most of them
 * use; a request that names none keeps its aspect. Everything else is unchanged.
 */
export function capabilityModel(model: AspectModel, units: Unit[]): AspectModel & { capabilities: Set<string> } {
  const phrases = new Map<string, Map<string, number>>();
  const keyOf = new Map<Unit, string>();
  for (const u of units) {
    if (u.kind !== "request") continue;
    const phrase = requestedCapability(u.text);
    if (!phrase) continue;
    const key = `capability:${capabilityKey(phrase)}`;
    if (key === "capability:") continue;
    keyOf.set(u, key);
    const seen = phrases.get(key) ?? new Map<string, number>();
    seen.set(phrase, (seen.get(phrase) ?? 0) + 1);
    phrases.set(key, seen);
  }
  // A capability whose words hold another's is that one, narrowed ("recurring reminders for weekly
  // reviews" is "recurring reminders"): each key joins the shortest key whose words it holds.
  const wordsOf = (key: string) => new Set(key.slice("capability:".length).split(" "));
  const keys = [...phrases.keys()].sort((a, b) => wordsOf(a).size - wordsOf(b).size || a.localeCompare(b));
  const parent = new Map<string, string>();
  for (const key of keys) {
    const words = wordsOf(key);
    const broader = keys.find((k) => k !== key && !parent.has(k) && [...wordsOf(k)].every((w) => words.has(w)));
    if (broader) parent.set(key, broader);
  }
  for (const [key, into] of parent) {
    const target = phrases.get(into)!;
    for (const [phrase, n] of phrases.get(key)!) target.set(phrase, (target.get(phrase) ?? 0) + n);
    phrases.delete(key);
  }
  for (const [u, key] of keyOf) if (parent.has(key)) keyOf.set(u, parent.get(key)!);
  // Each capability is named by the phrase most of its requests use (the shortest on a tie).
  const named = new Map(
    [...phrases].map(([key, seen]) => [
      key,
      [...seen].sort((a, b) => b[1] - a[1] || a[0].length - b[0].length || a[0].localeCompare(b[0]))[0]![0],
    ]),
  );
  return {
    ...model,
    capabilities: new Set(named.values()),
    aspectOf: (u: MinedUnit) => {
      const key = keyOf.get(u as Unit);
      if (key) return named.get(key) ?? null;
      const aspect = model.aspectOf(u);
      return aspect === OVERALL && u.kind === "request" ? null : aspect;
    },
  };
}
