import model from "wink-eng-lite-web-model";
import winkNLP from "wink-nlp";

/**
 * Opinion units: the sentence-level spans of a stored original, each with the aspect it
 * talks about and a sentiment score. Sentences come from `Intl.Segmenter` (Unicode
 * sentence boundaries, exact offsets); sentiment and part-of-speech tags from wink-nlp
 * with its English lite model (lexicon-based sentiment with negation handling, score in
 * -1..1). Offsets count Unicode code points, so `[...content].slice(start, end)` (and
 * PostgreSQL's `substr(content, start + 1, end - start)`) give back exactly `text`.
 */
export type SentimentLabel = "positive" | "negative" | "neutral";

export interface OpinionSpan {
  /** Code-point offsets into the row's content; the span's text is exactly that slice. */
  start: number;
  end: number;
  text: string;
  aspect: string | null;
  sentiment: number;
  label: SentimentLabel;
}

/** Longest unit, in UTF-16 code units; longer sentences are cut at a space. */
export const MAX_UNIT_CHARS = 1000;
/** Units per row: very long rows keep their first MAX_UNITS_PER_ROW sentences. */
export const MAX_UNITS_PER_ROW = 1000;
export const SENTIMENT_THRESHOLD = 0.05;

const nlp = winkNLP(model, ["sbd", "negation", "sentiment", "pos"]);
const its = nlp.its;
const segmenter = new Intl.Segmenter("en", { granularity: "sentence" });

/** Nouns too generic to name what a sentence is about. */
const GENERIC_NOUNS = new Set([
  "thing",
  "lot",
  "way",
  "time",
  "people",
  "stuff",
  "bit",
  "kind",
  "day",
  "year",
  "week",
  "month",
  "everyone",
  "someone",
  "anyone",
  "something",
  "anything",
  "nothing",
  "one",
  "guy",
  "man",
  "point",
  "fact",
  "part",
  "reason",
]);

export function labelFor(score: number): SentimentLabel {
  if (score >= SENTIMENT_THRESHOLD) return "positive";
  if (score <= -SENTIMENT_THRESHOLD) return "negative";
  return "neutral";
}

const HAS_WORD = /[\p{L}\p{N}]/u;

/** Sentence spans as UTF-16 offsets, trimmed of surrounding whitespace, long ones cut at spaces. */
export function sentenceSpans(text: string): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  for (const seg of segmenter.segment(text)) {
    const raw = seg.segment;
    const lead = raw.length - raw.trimStart().length;
    const trail = raw.length - raw.trimEnd().length;
    let start = seg.index + lead;
    const end = seg.index + raw.length - trail;
    while (start < end) {
      let cut = end;
      if (cut - start > MAX_UNIT_CHARS) {
        const window = text.slice(start, start + MAX_UNIT_CHARS);
        const space = window.search(/\s\S*$/);
        cut = space > MAX_UNIT_CHARS / 2 ? start + space : start + MAX_UNIT_CHARS;
        // Never split a surrogate pair.
        if (/[\uD800-\uDBFF]/.test(text.charAt(cut - 1))) cut -= 1;
      }
      let pieceEnd = cut;
      while (pieceEnd > start && /\s/.test(text.charAt(pieceEnd - 1))) pieceEnd--;
      if (HAS_WORD.test(text.slice(start, pieceEnd))) spans.push({ start, end: pieceEnd });
      if (spans.length >= MAX_UNITS_PER_ROW) return spans;
      start = cut;
      while (start < end && /\s/.test(text.charAt(start))) start++;
    }
  }
  return spans;
}

/** Maps UTF-16 offsets to code-point offsets (identity for text without astral characters). */
export function codePointIndexer(text: string): (utf16: number) => number {
  if (!/[\uD800-\uDFFF]/.test(text)) return (i) => i;
  const table = new Uint32Array(text.length + 1);
  let cp = 0;
  for (let i = 0; i < text.length; i++) {
    table[i] = cp;
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        table[i + 1] = cp;
        i++;
      }
    }
    cp++;
  }
  table[text.length] = cp;
  return (i) => table[i] ?? cp;
}

/** The code-point slice `[start, end)` of `text`. */
export function sliceCodePoints(text: string, start: number, end: number): string {
  if (!/[\uD800-\uDFFF]/.test(text)) return text.slice(start, end);
  return Array.from(text).slice(start, end).join("");
}

/** Sentiment score in -1..1 and the aspect (a noun phrase, lemmatised) of one sentence. */
export function analyseSentence(sentence: string): { aspect: string | null; sentiment: number } {
  // A capitalised first word is tagged as a proper noun ("Terrible pricing …"); tag it lower-cased.
  const doc = nlp.readDoc(sentence.charAt(0).toLowerCase() + sentence.slice(1));
  const sentiment = Math.max(-1, Math.min(1, Number(doc.out(its.sentiment)) || 0));
  const pos = doc.tokens().out(its.pos) as string[];
  // The typings of `its.lemma` do not match `out()`; at run time it is a token helper like the others.
  const lemmas = doc.tokens().out(its.lemma as unknown as typeof its.normal) as string[];
  const stop = doc.tokens().out(its.stopWordFlag) as boolean[];
  let aspect: string | null = null;
  for (let i = 0; i < pos.length && aspect === null; i++) {
    if (pos[i] !== "NOUN" && pos[i] !== "PROPN") continue;
    const words: string[] = [];
    // A modifier directly before the noun that reads as part of its name ("onboarding flow").
    const before = lemmas[i - 1];
    if (i > 0 && before && (pos[i - 1] === "VERB" || pos[i - 1] === "ADJ") && /ing$/.test(before)) words.push(before);
    let j = i;
    while (j < pos.length && (pos[j] === "NOUN" || pos[j] === "PROPN") && words.length < 3) {
      const lemma = (lemmas[j] ?? "").toLowerCase();
      if (/^[\p{L}][\p{L}\p{N}'-]*$/u.test(lemma) && !stop[j]) words.push(lemma);
      j++;
    }
    const head = words.at(-1);
    if (head && head.length >= 3 && !GENERIC_NOUNS.has(head)) aspect = words.join(" ");
    i = j - 1;
  }
  return { aspect, sentiment: Math.round(sentiment * 1000) / 1000 };
}

/** Every opinion unit of a text, in order. Deterministic: same text, same units. */
export function opinionUnits(text: string): OpinionSpan[] {
  const toCp = codePointIndexer(text);
  return sentenceSpans(text).map(({ start, end }) => {
    const sentence = text.slice(start, end);
    const { aspect, sentiment } = analyseSentence(sentence);
    return { start: toCp(start), end: toCp(end), text: sentence, aspect, sentiment, label: labelFor(sentiment) };
  });
}
