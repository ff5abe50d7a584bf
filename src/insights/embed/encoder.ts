import path from "node:path";
import type { EmbeddingProvider } from "./provider.js";
import { modelDir, modelTokenizer } from "./static.js";
import type { WordPieceTokenizer } from "./wordpiece.js";

/**
 * The default embedder: all-MiniLM-L6-v2, a trained sentence encoder (6 layers, 384 dimensions), exported
 * to ONNX with its mean pooling and L2 normalisation in the graph and its weights quantised to int8
 * (models/prepare/), run in process by onnxruntime-node on the CPU. The runtime and the model are loaded
 * on the first embed, so a process that never embeds never loads them (about 23 MB of weights, 60–90 MB
 * of resident memory once loaded; docs/operations.md).
 *
 * Texts are cut to 256 word pieces ([CLS] and [SEP] included), the model's own limit, and run in batches
 * of texts of similar length (less padding).
 */
export const ENCODER_MODEL = "minilm-l6-v2-int8-v1";
export const ENCODER_DIMENSIONS = 384;
export const ENCODER_MAX_TOKENS = 256;

export interface EncoderOptions {
  /** Folder of encoder.int8.onnx and vocab.txt (models/minilm-l6-v2). */
  dir?: string;
  /** onnxruntime's intra-op threads for one run (1: one core a run; concurrent runs use more). */
  threads?: number;
  /** Texts a run (default 32). */
  batchSize?: number;
}

type Ort = typeof import("onnxruntime-node");
type Session = import("onnxruntime-node").InferenceSession;

interface Loaded {
  ort: Ort;
  session: Session;
  tokenizer: WordPieceTokenizer;
}

const sessions = new Map<string, Promise<Loaded>>();

/** The runtime and the session of one model folder and thread count, created once per process. */
function load(dir: string, threads: number): Promise<Loaded> {
  const key = `${dir}\u0000${threads}`;
  let loading = sessions.get(key);
  if (!loading) {
    loading = (async () => {
      const ort = await import("onnxruntime-node");
      const session = await ort.InferenceSession.create(path.join(dir, "encoder.int8.onnx"), {
        executionProviders: ["cpu"],
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        executionMode: "sequential",
        graphOptimizationLevel: "all",
        // The arena keeps the largest batch's buffers for the life of the process; without it, memory
        // goes back after each run (a few per cent slower).
        enableCpuMemArena: false,
        enableMemPattern: false,
      });
      return { ort, session, tokenizer: modelTokenizer(dir) };
    })();
    loading.catch(() => sessions.delete(key));
    sessions.set(key, loading);
  }
  return loading;
}

/** Whether this process has loaded the encoder (for the memory report and the tests). */
export function encoderLoaded(): boolean {
  return sessions.size > 0;
}

async function runBatch(loaded: Loaded, batch: number[][]): Promise<Float32Array[]> {
  const { ort, session } = loaded;
  const width = Math.max(...batch.map((ids) => ids.length));
  const ids = new BigInt64Array(batch.length * width);
  const mask = new BigInt64Array(batch.length * width);
  batch.forEach((row, r) => {
    for (let t = 0; t < row.length; t++) {
      ids[r * width + t] = BigInt(row[t]!);
      mask[r * width + t] = 1n;
    }
  });
  const feeds = {
    input_ids: new ort.Tensor("int64", ids, [batch.length, width]),
    attention_mask: new ort.Tensor("int64", mask, [batch.length, width]),
  };
  const out = await session.run(feeds);
  const data = out.sentence_embedding?.data as Float32Array | undefined;
  if (!data || data.length !== batch.length * ENCODER_DIMENSIONS) throw new Error("the encoder answered an unexpected shape");
  for (const tensor of Object.values(out)) tensor.dispose?.();
  return batch.map((_, r) => data.slice(r * ENCODER_DIMENSIONS, (r + 1) * ENCODER_DIMENSIONS));
}

/**
 * One run of the encoder at a time in a process: concurrent requests take turns (a short text's run takes a
 * few milliseconds) rather than running on several of libuv's threads at once, each of which would keep its
 * own malloc arena of the runs' buffers (measured in docs/benchmarks.md, "Embedding models").
 */
let turn: Promise<unknown> = Promise.resolve();
function inTurn<T>(work: () => Promise<T>): Promise<T> {
  const result = turn.then(work, work);
  turn = result.catch(() => undefined);
  return result;
}

/** Unit vectors of the texts, in order, as Float32Array. */
export async function encodeTexts(texts: readonly string[], options: EncoderOptions = {}): Promise<Float32Array[]> {
  if (texts.length === 0) return [];
  const loaded = await load(options.dir ?? modelDir(), options.threads ?? 1);
  const batchSize = options.batchSize ?? 32;
  const tokens = texts.map((t) => loaded.tokenizer.encode(t, ENCODER_MAX_TOKENS));
  // Similar lengths together: a batch is padded to its longest text.
  const order = tokens.map((_, i) => i).sort((a, b) => tokens[a]!.length - tokens[b]!.length);
  const out = new Array<Float32Array>(texts.length);
  for (let i = 0; i < order.length; i += batchSize) {
    const slice = order.slice(i, i + batchSize);
    const vectors = await inTurn(() =>
      runBatch(
        loaded,
        slice.map((k) => tokens[k]!),
      ),
    );
    slice.forEach((k, j) => {
      out[k] = vectors[j]!;
    });
  }
  return out;
}

/** The encoder behind the `EmbeddingProvider` interface (values rounded as stored: 6 decimals). */
export function encoderEmbedder(options: EncoderOptions = {}): EmbeddingProvider {
  return {
    model: ENCODER_MODEL,
    dimensions: ENCODER_DIMENSIONS,
    embed: async (texts) => (await encodeTexts(texts, options)).map(round6),
  };
}

function round6(v: Float32Array): number[] {
  const out = new Array<number>(v.length);
  for (let i = 0; i < v.length; i++) out[i] = Math.round(v[i]! * 1e6) / 1e6;
  return out;
}
