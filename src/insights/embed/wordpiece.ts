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

const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}]/u;
const WHITESPACE = /\s/u;
const MARK = /\p{Mn}/gu;
const PUNCTUATION = /[\p{P}!-/:-@[-`{-~]/u;
const PLAIN_ASCII = /^[\x20-\x7e]*$/u;

function isChinese(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b920 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

/**
 * The normalised text: control and format characters (and U+0000, U+FFFD) dropped, any whitespace a
 * space, each Chinese character set apart by spaces, accents stripped (NFD, then no non-spacing marks),
 * each character lower-cased on its own (as the reference does: no final-sigma rule).
 */
export function normalizeBert(text: string): string {
  if (PLAIN_ASCII.test(text)) return text.toLowerCase();
  let cleaned = "";
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0 || cp === 0xfffd) continue;
    if (ch === "\t" || ch === "\n" || ch === "\r" || WHITESPACE.test(ch)) {
      cleaned += " ";
      continue;
    }
    if (CONTROL_OR_FORMAT.test(ch)) continue;
    cleaned += isChinese(cp) ? ` ${ch} ` : ch;
  }
  const stripped = cleaned.normalize("NFD").replace(MARK, "");
  let lower = "";
  for (const ch of stripped) lower += ch.toLowerCase();
  return lower;
}

/** Words and punctuation marks of normalised text: split on spaces, each punctuation mark its own word. */
export function preTokenize(normalized: string): string[] {
  const words: string[] = [];
  for (const chunk of normalized.split(" ")) {
    if (chunk === "") continue;
    let start = 0;
    let i = 0;
    for (const ch of chunk) {
      if (PUNCTUATION.test(ch)) {
        if (i > start) words.push(chunk.slice(start, i));
        words.push(ch);
        start = i + ch.length;
      }
      i += ch.length;
    }
    if (start < chunk.length) words.push(start === 0 ? chunk : chunk.slice(start));
  }
  return words;
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
