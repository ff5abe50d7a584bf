import { documentStructure, sectionRole } from "../structure.js";

/**
 * The features the feedback-kind model reads from one original: the words and the character
 * 4-grams of its title, the words of its author's prose (structure.ts cuts out code, templates,
 * logs and quotes), named cue families in the title and in the prose ("how do I", "crashes",
 * "please add"), which parts of a document it has (a stack trace, a code block, an environment
 * dump), the roles of its template sections ("steps to reproduce", "describe the solution you'd
 * like") and the shape of its title ("How do I …?"). Names are strings; every value is 1.
 */
export type Features = Map<string, number>;

const WORD = /[\p{L}][\p{L}\p{N}'’]*/gu;
const QUESTION_OPENERS = new Set([
  "how",
  "what",
  "why",
  "where",
  "when",
  "which",
  "who",
  "is",
  "are",
  "can",
  "could",
  "does",
  "do",
  "should",
  "would",
  "will",
  "any",
  "anyone",
  "help",
]);
/** Characters of prose read for words: enough for the opening of a long issue. */
const MAX_PROSE_CHARS = 6000;
/** Length of the title's character n-grams (over its words, each padded by a space). */
const TITLE_GRAM = 4;

export type CueKind = "bug" | "feature" | "question";

/**
 * Families of phrasing that mark a kind in any project or app: each a regular expression over
 * lower-cased text (apostrophes as '), looked for in the title (`cue:t:<kind>.<family>`) and in
 * the prose (`cue:b:<kind>.<family>`). A family pools evidence that single words spread thin,
 * so the model can weigh "is there a way to" the same in a project it has never seen.
 */
export const CUE_FAMILIES: readonly { kind: CueKind; family: string; pattern: RegExp }[] = [
  { kind: "question", family: "how", pattern: /\bhow (?:do|does|can|could|should|would|to|is|are|did)\b/ },
  {
    kind: "question",
    family: "possible",
    pattern: /\bis (?:it|there) (?:possible|a way|any way|an? (?:option|setting|command|function))\b|\b(?:any|a) way to\b/,
  },
  { kind: "question", family: "what", pattern: /\bwhat(?:'s| is| are| does| do| should| would)\b/ },
  { kind: "question", family: "why", pattern: /\bwhy (?:does|do|is|are|doesn't|isn't|can't|would|did|not)\b/ },
  {
    kind: "question",
    family: "help",
    pattern: /\b(?:help|question|confused|confusing|wonder(?:ing)?|advice|clarif\w*|explain|understand|unclear)\b/,
  },
  {
    kind: "question",
    family: "anyone",
    pattern: /\b(?:anyone|somebody|someone) (?:know|help|else|have)\b|\bany (?:idea|hint|suggestion|advice|pointer)s?\b/,
  },
  { kind: "question", family: "unsure", pattern: /\b(?:not sure|unsure|no idea|don't understand|do not understand|am i)\b/ },
  {
    kind: "question",
    family: "doubt",
    pattern:
      /\bis (?:this|that|it) (?:a bug|expected|intended|normal|by design|possible)\b|\b(?:am i|are we) (?:doing|missing|using)\b|\bdoing (?:something|anything) wrong\b|\bi don't know (?:how|why|if|what|whether)\b|\bwhat am i\b|\bdid i miss\b|\bnot sure (?:if|whether|how|why|what)\b/,
  },
  {
    kind: "question",
    family: "trying",
    pattern:
      /\b(?:i'm trying|i am trying|i tried|i've tried|i want to|i'd like to know|i would like to know|i need to know|trying to (?:figure|understand|get|make|use|find))\b/,
  },
  { kind: "bug", family: "crash", pattern: /\b(?:crash\w*|segfault\w*|panic\w*|abort\w*|hangs?|hanging|freez\w*|deadlock\w*)\b/ },
  { kind: "bug", family: "error", pattern: /\b(?:errors?|exceptions?|fail\w*|traceback|stack ?trace|backtrace)\b/ },
  {
    kind: "bug",
    family: "not_working",
    pattern:
      /\b(?:doesn't|does not|don't|do not|isn't|is not|not|won't|can't|cannot|no longer|stopped|stops) (?:work\w*|function\w*|load\w*|open\w*|show\w*|start\w*|sync\w*|connect\w*|respond\w*|count\w*|record\w*|track\w*|sav\w*|updat\w*|display\w*|measur\w*|pair\w*|log\w*|run\w*|install\w*|launch\w*|appear\w*|compil\w*|build\w*)\b|\bbroken\b|\bbreaks?\b/,
  },
  {
    kind: "bug",
    family: "keeps",
    pattern:
      /\b(?:keeps?|kept) (?:on )?(?:crash\w*|clos\w*|stopp\w*|freez\w*|restart\w*|asking|logging|disconnect\w*|failing|resetting|showing)\b|\bunable to\b|\bwon't let\b/,
  },
  { kind: "bug", family: "wrong", pattern: /\b(?:wrong\w*|incorrect\w*|invalid|unexpected\w*|inconsistent|bogus|erroneous)\b/ },
  {
    kind: "bug",
    family: "regression",
    pattern:
      /\b(?:regression|regressed|since (?:the )?(?:last |latest |recent )?(?:update|upgrade|version|release)|after (?:the )?(?:last |latest |recent )?(?:update|upgrade|updating|upgrading))\b/,
  },
  { kind: "bug", family: "bug", pattern: /\b(?:bugs?|buggy|glitch\w*|issue with|problem with)\b/ },
  { kind: "feature", family: "add", pattern: /\b(?:add|adding)\b|\bplease (?:add|make|implement|include|consider|allow|support)\b/ },
  { kind: "feature", family: "support", pattern: /\bsupport(?:s|ing)? (?:for|of)\b|\b(?:add|adding|no|without|lack of) support\b/ },
  {
    kind: "feature",
    family: "allow",
    pattern: /\b(?:allow\w*|enable\w*|ability to|option(?:s|al)? (?:to|for)|configur\w*|customi[sz]\w*|setting to)\b/,
  },
  {
    kind: "feature",
    family: "wish",
    pattern:
      /\bwould (?:be|love) (?:nice|great|good|useful|helpful|awesome|cool|better)\b|\bwould (?:love|like) (?:to|it|if|a|an)\b|\bi wish\b|\bwish(?:es)? (?:it|there|the|you)\b|\bit would be\b/,
  },
  { kind: "feature", family: "request", pattern: /\b(?:feature|request\w*|suggest\w*|propos\w*|enhancement|improve\w*|idea)\b/ },
  {
    kind: "feature",
    family: "should",
    pattern:
      /\b(?:should|could|can you|please) (?:be able|have|support|allow|provide|offer|show|include|add|make)\b|\bneeds? (?:to be able|an? option|a way)\b/,
  },
  {
    kind: "feature",
    family: "lacking",
    pattern:
      /\b(?:bring (?:it )?back|brought back|(?:was|were|been|got) removed|disappeared|lacking|lacks|no (?:option|setting|way) to|(?:doesn't|does not|don't|do not) have (?:an?|any|the)? ?(?:option|setting|way|feature)|there is no|there's no)\b/,
  },
  { kind: "feature", family: "new", pattern: /\b(?:implement\w*|introduc\w*|provide|new)\b/ },
];

/** The kind a feature is a cue of by its name (a cue family, or a question-shaped title), if any. */
export function cueKindOf(name: string): CueKind | undefined {
  const cue = /^cue:[tb]:(bug|feature|question)\./.exec(name);
  if (cue) return cue[1] as CueKind;
  return name === "shape:title_question" || name === "shape:title_opener" ? "question" : undefined;
}

const lower = (text: string) => text.toLowerCase().replace(/[’']/g, "'");
const words = (text: string) => lower(text).match(WORD) ?? [];

function addCues(out: Features, where: "t" | "b", text: string) {
  if (text === "") return;
  for (const { kind, family, pattern } of CUE_FAMILIES) if (pattern.test(text)) out.set(`cue:${where}:${kind}.${family}`, 1);
}

/** Features of an original: its title (may be empty) and its text as stored. */
export function kindFeatures(title: string, content: string): Features {
  const { features: out, titled } = sharedKindFeatures(title, content);
  // Each feature also once more under the kind of text it came from (a titled post or issue, or an
  // untitled review or comment), so a word may weigh differently in each and the same in both.
  const domain = domainOf(titled);
  for (const [name, value] of [...out]) out.set(domain + name, value);
  return out;
}

/** The prefix of a feature's copy under the kind of text it came from. */
export const domainOf = (titled: boolean) => (titled ? "titled|" : "untitled|");

/**
 * The features of an original without their copies under the kind of text (`kindFeatures` adds
 * them): what inference reads, with the two copies' weights folded into one (model.ts).
 */
export function sharedKindFeatures(title: string, content: string): { features: Features; titled: boolean } {
  const out: Features = new Map();
  const titleWords = words(title);
  for (const w of titleWords) out.set(`t:${w}`, 1);
  if (titleWords.length === 0) out.set("shape:no_title", 1);
  else {
    if (/\?\s*$/.test(title)) out.set("shape:title_question", 1);
    if (QUESTION_OPENERS.has(titleWords[0]!)) out.set("shape:title_opener", 1);
    if (/\bv?\d+\.\d+/.test(title)) out.set("cue:t:bug.version", 1);
    const padded = ` ${titleWords.join(" ")} `;
    for (let i = 0; i + TITLE_GRAM <= padded.length; i++) out.set(`tc:${padded.slice(i, i + TITLE_GRAM)}`, 1);
    addCues(out, "t", lower(title));
  }

  let prose = "";
  let questions = 0;
  for (const region of documentStructure(content)) {
    if (region.kind !== "prose") {
      out.set(`part:${region.kind}`, 1);
      continue;
    }
    const piece = content.slice(region.start, region.end);
    if (prose.length < MAX_PROSE_CHARS) prose += `${piece}\n`;
    questions += (piece.match(/\?/g) ?? []).length;
    out.set(`role:${sectionRole(region.section)}`, 1);
  }
  prose = prose.slice(0, MAX_PROSE_CHARS);
  const proseWords = words(prose);
  for (const w of proseWords) out.set(`b:${w}`, 1);
  addCues(out, "b", lower(prose));
  if (questions > 0) out.set("shape:body_question", 1);
  if (questions > 2) out.set("shape:body_questions", 1);
  out.set(`shape:prose_${proseWords.length < 15 ? "short" : proseWords.length < 80 ? "medium" : "long"}`, 1);
  return { features: out, titled: titleWords.length > 0 };
}
