import { randomUUID } from "node:crypto";
import type pg from "pg";
import { pageEmbeddingText } from "../../src/insights/context/embedding.js";
import { HASHING_MODEL, hashingVector } from "../../src/insights/embed/hashing.js";

/**
 * A synthetic corpus of saved pages: a Zipf-distributed vocabulary of 30,000 made-up
 * words plus English stop words, pages of 80–400 words (≈1.8 KB), embedded with the
 * service's default local embedder. Deterministic for a given seed.
 */
export function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STOP = "the of and to a in is that for it as with was on be by this are or at from have an not but we they which".split(" ");
const ONSETS = [
  "b",
  "c",
  "d",
  "f",
  "g",
  "h",
  "k",
  "l",
  "m",
  "n",
  "p",
  "r",
  "s",
  "t",
  "v",
  "z",
  "br",
  "cr",
  "pl",
  "st",
  "tr",
  "gr",
  "sh",
  "ch",
];
const VOWELS = ["a", "e", "i", "o", "u", "ai", "ou", "ea"];
const CODAS = ["", "", "n", "r", "s", "l", "t", "m", "nd", "rk"];

export class Vocabulary {
  readonly words: string[];
  private readonly cumulative: Float64Array;

  constructor(
    private readonly rand: () => number,
    size = 30_000,
  ) {
    const seen = new Set<string>();
    while (seen.size < size) {
      const syllables = 2 + Math.floor(rand() * 3);
      let w = "";
      for (let s = 0; s < syllables; s++) w += pick(rand, ONSETS) + pick(rand, VOWELS) + pick(rand, CODAS);
      seen.add(w);
    }
    this.words = [...seen];
    // Zipf's law with exponent 1.05 over the ranks.
    this.cumulative = new Float64Array(size);
    let total = 0;
    for (let r = 0; r < size; r++) {
      total += 1 / (r + 1) ** 1.05;
      this.cumulative[r] = total;
    }
    for (let r = 0; r < size; r++) this.cumulative[r]! /= total;
  }

  /** A word drawn by frequency. */
  draw(): string {
    const x = this.rand();
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo]!;
  }

  sentence(length: number): string {
    const out: string[] = [];
    for (let i = 0; i < length; i++) out.push(this.rand() < 0.3 ? pick(this.rand, STOP) : this.draw());
    return out.join(" ");
  }
}

const pick = <T>(rand: () => number, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;

export interface GeneratedPage {
  title: string;
  content: string;
}

export function generatePage(vocab: Vocabulary, rand: () => number): GeneratedPage {
  const title = vocab.sentence(3 + Math.floor(rand() * 6));
  const words = 80 + Math.floor(rand() * 320);
  const sentences: string[] = [];
  for (let n = 0; n < words; ) {
    const len = Math.min(6 + Math.floor(rand() * 14), words - n);
    const s = vocab.sentence(len);
    sentences.push(`${s.charAt(0).toUpperCase()}${s.slice(1)}.`);
    n += len;
  }
  return { title: title.charAt(0).toUpperCase() + title.slice(1), content: sentences.join(" ") };
}

/** How a user's pages are embedded: the model's name and its vectors of a batch of texts. */
export interface PageEmbedder {
  model: string;
  embed: (texts: string[]) => Promise<number[][]>;
}

/** Feature hashing: cheap, for the pages of users whose recall is not measured (their number and size count, not their vectors). */
export const hashingPages: PageEmbedder = {
  model: HASHING_MODEL,
  embed: async (texts) => texts.map((t) => hashingVector(t)),
};

/** Inserts pages for one user in batches, embedded with `embedder` (the save operation's embedder for the measured user). */
export async function insertPages(
  client: pg.PoolClient | pg.Client,
  userId: string,
  pages: GeneratedPage[],
  prefix: string,
  embedder: PageEmbedder = hashingPages,
) {
  const BATCH = 500;
  for (let start = 0; start < pages.length; start += BATCH) {
    const batch = pages.slice(start, start + BATCH);
    const ids = batch.map(() => randomUUID());
    const paths = batch.map((_, i) => `${prefix}/${start + i}`);
    const vectors = await embedder.embed(batch.map((p) => pageEmbeddingText(p.title, p.content)));
    const embeddings = vectors.map((v) => `{${v.join(",")}}`);
    await client.query(
      `INSERT INTO pages (id, user_id, path, title, content, tags, embedding, embedding_model)
       SELECT id, $1::uuid, path, title, content, ARRAY['bench'], embedding::real[], $2
       FROM unnest($3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[]) AS t(id, path, title, content, embedding)`,
      [userId, embedder.model, ids, paths, batch.map((p) => p.title), batch.map((p) => p.content), embeddings],
    );
  }
}
