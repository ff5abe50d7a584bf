import { readFileSync } from "node:fs";
import path from "node:path";
import { projectRoot } from "../../platform/paths.js";
import type { EmbeddingProvider } from "./provider.js";
import { parseVocab, type WordPieceTokenizer, wordPieceTokenizer } from "./wordpiece.js";

/**
 * The static companion of the encoder: one vector per WordPiece token, distilled from all-MiniLM-L6-v2
 * (model2vec's method: every token through the encoder, SIF weighting; then the rows trained so that a
 * sentence's mean row points where the encoder's sentence vector points; models/prepare/). A text's
 * vector is the mean of its tokens' rows, L2-normalised: no network, no native code, tens of thousands
 * of sentences a second on one core, for bulk work (enrichment, grouping units at analysis time) where
 * the encoder would be too slow per row. It has the encoder's 384 dimensions, but its vectors are not
 * comparable with the encoder's: compare them only with each other.
 *
 * Files (models/minilm-l6-v2/): vocab.txt (shared with the encoder), static.f16.bin (rows × dims float16,
 * little-endian, row i for vocab line i), static.json (shape and model id). Loaded on first use and kept
 * for the life of the process (12 MB: int8 with a scale a row).
 */
export const STATIC_MODEL = "minilm-l6-v2-static-v2";
export const STATIC_DIMENSIONS = 384;

export interface StaticEmbedder {
  readonly model: string;
  readonly dimensions: number;
  /** Unit vectors (zeros for a text with no known token), one per text, in order. */
  embedSync(texts: readonly string[]): Float32Array[];
  /** The same vector as a plain array (what the stores and the HTTP answer carry). */
  embedOne(text: string): Float32Array;
}

interface StaticMeta {
  model: string;
  rows: number;
  dimensions: number;
  max_tokens?: number;
}

/** The folder holding the encoder's and the static model's files. */
export function modelDir(): string {
  return path.join(projectRoot(), "models", "minilm-l6-v2");
}

let sharedTokenizer: { dir: string; tokenizer: WordPieceTokenizer } | undefined;

/** The WordPiece tokenizer of the models' vocabulary, read once per process. */
export function modelTokenizer(dir = modelDir()): WordPieceTokenizer {
  if (sharedTokenizer?.dir !== dir) {
    sharedTokenizer = { dir, tokenizer: wordPieceTokenizer(parseVocab(readFileSync(path.join(dir, "vocab.txt"), "utf8"))) };
  }
  return sharedTokenizer.tokenizer;
}

/** float16 (IEEE 754 binary16) bits to a number. */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

function loadStatic(dir: string): StaticEmbedder {
  const meta = JSON.parse(readFileSync(path.join(dir, "static.json"), "utf8")) as StaticMeta;
  const tokenizer = modelTokenizer(dir);
  const { rows, dimensions } = meta;
  if (meta.model !== STATIC_MODEL || dimensions !== STATIC_DIMENSIONS) {
    throw new Error(`static.json describes ${meta.model} (${dimensions} dimensions), not ${STATIC_MODEL} (${STATIC_DIMENSIONS})`);
  }
  if (rows !== tokenizer.vocab.size) throw new Error(`static.json has ${rows} rows but vocab.txt ${tokenizer.vocab.size} tokens`);
  const bytes = readFileSync(path.join(dir, "static.f16.bin"));
  if (bytes.byteLength !== rows * dimensions * 2) throw new Error("static.f16.bin does not hold rows × dimensions float16 values");
  // Held as int8 with one scale a row (12 MB instead of 47 MB as float32): each value within 0.4 % of the
  // row's largest, which moves a text's vector by a cosine of less than 1e-4.
  const table = new Int8Array(rows * dimensions);
  const scales = new Float32Array(rows);
  const lut = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) lut[h] = halfToFloat(h);
  const row = new Float32Array(dimensions);
  for (let r = 0; r < rows; r++) {
    let max = 0;
    for (let d = 0; d < dimensions; d++) {
      const at = 2 * (r * dimensions + d);
      row[d] = lut[bytes[at]! | (bytes[at + 1]! << 8)]!;
      max = Math.max(max, Math.abs(row[d]!));
    }
    const scale = max / 127;
    scales[r] = scale;
    if (scale > 0) for (let d = 0; d < dimensions; d++) table[r * dimensions + d] = Math.round(row[d]! / scale);
  }
  const maxTokens = meta.max_tokens ?? 512;
  const unk = tokenizer.vocab.unk;

  const embedOne = (text: string): Float32Array => {
    const out = new Float32Array(dimensions);
    const ids = tokenizer.pieces(text);
    let used = 0;
    for (let k = 0; k < ids.length && used < maxTokens; k++) {
      const id = ids[k]!;
      if (id === unk) continue;
      used++;
      const base = id * dimensions;
      const scale = scales[id]!;
      for (let d = 0; d < dimensions; d++) out[d]! += table[base + d]! * scale;
    }
    let norm = 0;
    for (let d = 0; d < dimensions; d++) norm += out[d]! * out[d]!;
    if (norm > 0) {
      const scale = 1 / Math.sqrt(norm);
      for (let d = 0; d < dimensions; d++) out[d]! *= scale;
    }
    return out;
  };
  return { model: meta.model, dimensions, embedOne, embedSync: (texts) => texts.map(embedOne) };
}

let shared: { dir: string; embedder: StaticEmbedder } | undefined;

/** The static embedder, loaded on first call and cached for the process. */
export function staticEmbedder(dir = modelDir()): StaticEmbedder {
  if (shared?.dir !== dir) shared = { dir, embedder: loadStatic(dir) };
  return shared.embedder;
}

/** The static model behind the `EmbeddingProvider` interface (values rounded as stored: 6 decimals). */
export function staticEmbeddingProvider(dir?: string): EmbeddingProvider {
  let loaded: StaticEmbedder | undefined;
  const get = () => {
    loaded ??= staticEmbedder(dir);
    return loaded;
  };
  return {
    model: STATIC_MODEL,
    dimensions: STATIC_DIMENSIONS,
    embed: async (texts) => get().embedSync(texts).map(toStoredVector),
  };
}

/** A vector as the stores keep it: a plain array, 6 decimals. */
export function toStoredVector(v: Float32Array): number[] {
  const out = new Array<number>(v.length);
  for (let i = 0; i < v.length; i++) out[i] = Math.round(v[i]! * 1e6) / 1e6;
  return out;
}
