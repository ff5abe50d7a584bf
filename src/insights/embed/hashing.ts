import type { EmbeddingProvider } from "./provider.js";

/**
 * Feature-hashing embedder: word unigrams, word bigrams and character trigrams are
 * hashed (FNV-1a) into a fixed number of signed buckets, then L2-normalised. The same
 * text always gives the same vector; texts sharing words or word pieces land close.
 */
export const HASHING_MODEL = "local-hashing-v1";
export const HASHING_DIMENSIONS = 384;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** One FNV-1a step: the hash state after one more UTF-16 code unit. */
const step = (hash: number, code: number) => Math.imul(hash ^ code, FNV_PRIME);

/** FNV-1a over the UTF-16 code units of `text`, continuing from `hash` (so a prefix's hash is computed once). */
function fnv1a(text: string, hash = FNV_OFFSET): number {
  let h = hash;
  for (let i = 0; i < text.length; i++) h = step(h, text.charCodeAt(i));
  return h;
}
/** The hash states after each feature family's prefix. */
const WORD_PREFIX = fnv1a("w:");
const BIGRAM_PREFIX = fnv1a("b:");
const GRAM_PREFIX = fnv1a("c:");
const CARET = "^".charCodeAt(0);
const DOLLAR = "$".charCodeAt(0);
const SPACE = " ".charCodeAt(0);

export function tokenize(text: string): string[] {
  return (
    text
      .toLowerCase()
      .normalize("NFKC")
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/**
 * The vector of a text. Each feature's hash is the FNV-1a of its name ("w:" + word, "b:" + word + " " +
 * next word, "c:" + a trigram of "^" + word + "$"), computed by continuing from its prefix's hash over
 * the word's characters, so no feature name is ever built as a string.
 */
export function hashingVector(text: string, dimensions = HASHING_DIMENSIONS): number[] {
  const vector = new Float64Array(dimensions);
  const words = tokenize(text);
  if (words.length === 0) {
    // No letters or digits (e.g. "?!" or emoji): character trigrams of the text itself, so
    // any text with a visible character gets a unit vector rather than zeros.
    const padded = `^${text.normalize("NFKC").toLowerCase().replace(/\s+/gu, " ").trim()}$`;
    const chars = Array.from(padded);
    if (chars.length > 2) for (let j = 0; j + 3 <= chars.length; j++) addFeature(vector, fnv1a(`s:${chars.slice(j, j + 3).join("")}`), 1);
  }
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const n = word.length;
    addFeature(vector, fnv1a(word, WORD_PREFIX), 1);
    if (i + 1 < words.length) addFeature(vector, fnv1a(words[i + 1]!, step(fnv1a(word, BIGRAM_PREFIX), SPACE)), 0.7);
    // The trigrams of "^" + word + "$" (code units), sliding over it.
    let a = CARET;
    let b = word.charCodeAt(0);
    for (let k = 1; k <= n; k++) {
      const c = k < n ? word.charCodeAt(k) : DOLLAR;
      addFeature(vector, step(step(step(GRAM_PREFIX, a), b), c), 0.25);
      a = b;
      b = c;
    }
  }
  let norm = 0;
  for (let i = 0; i < dimensions; i++) norm += vector[i]! * vector[i]!;
  norm = Math.sqrt(norm);
  const out = new Array<number>(dimensions);
  for (let i = 0; i < dimensions; i++) out[i] = norm === 0 ? 0 : Math.round((vector[i]! / norm) * 1e6) / 1e6;
  return out;
}

/** A feature's signed weight into its bucket: the hash's top bit is the sign, the rest picks the bucket. */
function addFeature(vector: Float64Array, hash32: number, weight: number): void {
  const h = hash32 >>> 0;
  vector[h % vector.length]! += (h & 0x80000000) === 0 ? weight : -weight;
}

export function hashingEmbedder(dimensions = HASHING_DIMENSIONS): EmbeddingProvider {
  return {
    model: HASHING_MODEL,
    dimensions,
    embed: async (texts) => texts.map((t) => hashingVector(t, dimensions)),
  };
}

/** Cosine similarity of two vectors of the same length (0 when either is empty). */
export function cosine(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < n; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
