import type { EmbeddingProvider } from "./provider.js";

/**
 * Feature-hashing embedder: word unigrams, word bigrams and character trigrams are
 * hashed (FNV-1a) into a fixed number of signed buckets, then L2-normalised. The same
 * text always gives the same vector; texts sharing words or word pieces land close.
 */
export const HASHING_MODEL = "local-hashing-v1";
export const HASHING_DIMENSIONS = 384;

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export function tokenize(text: string): string[] {
  return (
    text
      .toLowerCase()
      .normalize("NFKC")
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

export function hashingVector(text: string, dimensions = HASHING_DIMENSIONS): number[] {
  const vector = new Float64Array(dimensions);
  const add = (feature: string, weight: number) => {
    const h = fnv1a(feature);
    const sign = (h & 0x80000000) === 0 ? 1 : -1;
    vector[h % dimensions]! += sign * weight;
  };
  const words = tokenize(text);
  if (words.length === 0) {
    // No letters or digits (e.g. "?!" or emoji): character trigrams of the text itself, so
    // any text with a visible character gets a unit vector rather than zeros.
    const padded = `^${text.normalize("NFKC").toLowerCase().replace(/\s+/gu, " ").trim()}$`;
    const chars = Array.from(padded);
    if (chars.length > 2) for (let j = 0; j + 3 <= chars.length; j++) add(`s:${chars.slice(j, j + 3).join("")}`, 1);
  }
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    add(`w:${word}`, 1);
    if (i + 1 < words.length) add(`b:${word} ${words[i + 1]}`, 0.7);
    const padded = `^${word}$`;
    for (let j = 0; j + 3 <= padded.length; j++) add(`c:${padded.slice(j, j + 3)}`, 0.25);
  }
  let norm = 0;
  for (const v of vector) norm += v * v;
  norm = Math.sqrt(norm);
  return Array.from(vector, (v) => (norm === 0 ? 0 : Math.round((v / norm) * 1e6) / 1e6));
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
