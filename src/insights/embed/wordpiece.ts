/**
 * BERT's uncased tokenizer, as the reference tokenizer of all-MiniLM-L6-v2 runs it (`BertNormalizer` with
 * clean text, Chinese characters split, accents stripped and lower case; `BertPreTokenizer`; `WordPiece`
 * with `##` continuations and at most 100 characters a word). Written here rather than taken from a
 * library: it is about 150 lines, needs nothing at run time but the vocabulary file, and is checked
 * against the reference tokenizer's ids on a few hundred sentences (test/embed/wordpiece.test.ts).
 */

export interface WordPieceVocab {
  readonly ids: ReadonlyMap<string, number>;
  readonly size: number;
  readonly cls: number;
  readonly sep: number;
  readonly pad: number;
  readonly unk: number;
}

const MAX_WORD_CHARS = 100;
const SPECIAL_TOKENS = /\[(?:CLS|SEP|MASK|PAD|UNK)\]/gu;

/** A vocabulary from the text of a `vocab.txt` (one token a line, the line number is the id). */
export function parseVocab(text: string): WordPieceVocab {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const ids = new Map<string, number>();
  for (let i = 0; i < lines.length; i++) {
    const token = lines[i]!.replace(/\r$/u, "");
    if (!ids.has(token)) ids.set(token, i);
  }
  const need = (token: string) => {
    const id = ids.get(token);
    if (id === undefined) throw new Error(`the vocabulary has no ${token} token`);
    return id;
  };
  return { ids, size: lines.length, cls: need("[CLS]"), sep: need("[SEP]"), pad: need("[PAD]"), unk: need("[UNK]") };
}

const PLAIN_ASCII = /^[\x20-\x7e]*$/u;
const NON_ASCII = /[\u0080-\u{10ffff}]/u;
const MARK = /\p{Mn}/gu;
/** What clean text and the Chinese-character split change: whitespace, control and format characters, CJK ideographs. */
const TO_CLEAN =
  /\s|[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}\ufffd]|[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\u{20000}-\u{2a6df}\u{2a700}-\u{2b73f}\u{2b740}-\u{2b81f}\u{2b920}-\u{2ceaf}\u{2f800}-\u{2fa1f}]/gu;
const WHITESPACE = /\s/u;
const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}\ufffd]/u;
const PUNCTUATION_CLASS = String.raw`\p{P}!-\/:-@\[-\x60{-~`;
/** A punctuation mark alone, or a run of anything but spaces and punctuation. */
const WORDS = new RegExp(`[${PUNCTUATION_CLASS}]|[^ ${PUNCTUATION_CLASS}]+`, "gu");

function cleanChar(ch: string): string {
  if (WHITESPACE.test(ch)) return " ";
  if (CONTROL_OR_FORMAT.test(ch)) return "";
  return ` ${ch} `;
}

/**
 * The normalised text: control and format characters (and U+0000, U+FFFD) dropped, any whitespace a
 * space, each Chinese character set apart by spaces, accents stripped (NFD, then no non-spacing marks),
 * each character lower-cased on its own (as the reference does: no final-sigma rule).
 */
export function normalizeBert(text: string): string {
  if (PLAIN_ASCII.test(text)) return text.toLowerCase();
  const cleaned = text.replace(TO_CLEAN, cleanChar);
  const stripped = NON_ASCII.test(cleaned) ? cleaned.normalize("NFD").replace(MARK, "") : cleaned;
  // Lower-casing the whole string differs from lower-casing each character only for a capital sigma.
  if (!stripped.includes("\u03a3")) return stripped.toLowerCase();
  let lower = "";
  for (const ch of stripped) lower += ch.toLowerCase();
  return lower;
}

/** Words and punctuation marks of normalised text: split on spaces, each punctuation mark its own word. */
export function preTokenize(normalized: string): string[] {
  return normalized.match(WORDS) ?? [];
}

/** WordPiece ids of one word, greedy longest match first; the whole word is [UNK] when a piece is missing. */
export function wordPieces(vocab: WordPieceVocab, word: string, out: number[]): void {
  const whole = vocab.ids.get(word);
  if (whole !== undefined) {
    out.push(whole);
    return;
  }
  const chars = /[\ud800-\udfff]/u.test(word) ? Array.from(word) : null;
  const length = chars ? chars.length : word.length;
  if (length > MAX_WORD_CHARS) {
    out.push(vocab.unk);
    return;
  }
  const piece = chars ? (a: number, b: number) => chars.slice(a, b).join("") : (a: number, b: number) => word.slice(a, b);
  const mark = out.length;
  let start = 0;
  while (start < length) {
    let end = length;
    let found = -1;
    while (end > start) {
      const sub = start > 0 ? `##${piece(start, end)}` : piece(start, end);
      const id = vocab.ids.get(sub);
      if (id !== undefined) {
        found = id;
        break;
      }
      end--;
    }
    if (found < 0) {
      out.length = mark;
      out.push(vocab.unk);
      return;
    }
    out.push(found);
    start = end;
  }
}

/**
 * A tokenizer over one vocabulary. `encode` gives `[CLS] … [SEP]` ids cut to `maxTokens` in all (the
 * encoder's input); `pieces` gives the bare word-piece ids (the static model's input). A word's pieces are
 * cached (bounded), since the same words come back row after row.
 */
export function wordPieceTokenizer(vocab: WordPieceVocab, cacheSize = 50_000) {
  const cache = new Map<string, number[]>();
  const piecesOf = (word: string, out: number[]) => {
    let ids = cache.get(word);
    if (ids === undefined) {
      ids = [];
      wordPieces(vocab, word, ids);
      if (cache.size >= cacheSize) cache.clear();
      cache.set(word, ids);
    }
    for (let k = 0; k < ids.length; k++) out.push(ids[k]!);
  };
  const segment = (text: string, out: number[], limit: number) => {
    for (const word of preTokenize(normalizeBert(text))) {
      if (out.length >= limit) return;
      piecesOf(word, out);
    }
  };
  const pieces = (text: string, limit = Number.POSITIVE_INFINITY): number[] => {
    const out: number[] = [];
    if (!text.includes("[")) segment(text, out, limit);
    else {
      // Special tokens written out in the text ("[SEP]") are matched before normalisation, as the reference does.
      let last = 0;
      for (const m of text.matchAll(SPECIAL_TOKENS)) {
        segment(text.slice(last, m.index), out, limit);
        const id = vocab.ids.get(m[0]);
        if (id !== undefined && out.length < limit) out.push(id);
        last = m.index + m[0].length;
      }
      segment(text.slice(last), out, limit);
    }
    if (out.length > limit) out.length = limit;
    return out;
  };
  return {
    vocab,
    pieces,
    encode(text: string, maxTokens: number): number[] {
      const body = pieces(text, Math.max(0, maxTokens - 2));
      return [vocab.cls, ...body, vocab.sep];
    },
  };
}

export type WordPieceTokenizer = ReturnType<typeof wordPieceTokenizer>;
