import { documentStructure, proseRanges } from "../structure.js";

/**
 * The features the feedback-kind model reads from one original: words and word pairs of its
 * title and of its author's prose (structure.ts cuts out code, templates, logs and quotes), which
 * parts of a document it has (a stack trace, a code block, an environment dump), the roles of its
 * template sections ("steps to reproduce", "describe the solution you'd like"), and the shape of
 * its title ("How do I …?"). Names are strings; values are 1 (present) or a small count.
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

const words = (text: string) => (text.toLowerCase().match(WORD) ?? []).map((w) => w.replace(/[’']/g, "'"));

function addWords(out: Features, prefix: string, list: string[]) {
  for (let i = 0; i < list.length; i++) {
    out.set(`${prefix}${list[i]}`, 1);
    if (i + 1 < list.length) out.set(`${prefix}${list[i]}_${list[i + 1]}`, 1);
  }
}

/** Features of an original: its title (may be empty) and its text as stored. */
export function kindFeatures(title: string, content: string): Features {
  const out: Features = new Map();
  const titleWords = words(title);
  addWords(out, "t:", titleWords);
  if (titleWords.length === 0) out.set("shape:no_title", 1);
  else {
    if (/\?\s*$/.test(title)) out.set("shape:title_question", 1);
    if (QUESTION_OPENERS.has(titleWords[0]!)) out.set("shape:title_opener", 1);
  }

  let prose = "";
  let questions = 0;
  for (const range of proseRanges(content)) {
    const piece = content.slice(range.start, range.end);
    if (prose.length < MAX_PROSE_CHARS) prose += `${piece}\n`;
    questions += (piece.match(/\?/g) ?? []).length;
    out.set(`role:${range.sectionRole}`, 1);
  }
  addWords(out, "b:", words(prose.slice(0, MAX_PROSE_CHARS)));
  if (questions > 0) out.set("shape:body_question", 1);
  if (questions > 2) out.set("shape:body_questions", 1);
  const proseWords = words(prose).length;
  out.set(`shape:prose_${proseWords < 15 ? "short" : proseWords < 80 ? "medium" : "long"}`, 1);

  for (const region of documentStructure(content)) {
    if (region.kind !== "prose") out.set(`part:${region.kind}`, 1);
  }
  // Each feature also once more under the kind of text it came from (a titled post or issue, or an
  // untitled review or comment), so a word may weigh differently in each and the same in both.
  const domain = titleWords.length > 0 ? "titled|" : "untitled|";
  for (const [name, value] of [...out]) out.set(domain + name, value);
  return out;
}
