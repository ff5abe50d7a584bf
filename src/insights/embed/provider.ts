import type { Response } from "undici";
import type { Config } from "../../platform/config.js";
import { AppError } from "../../platform/errors.js";
import { parseRetryAfterSeconds, retryAfterHeader } from "../../platform/http/retry-after.js";
import { outboundFetch, trustedEndpoint } from "../../platform/outbound.js";
import { encoderEmbedder } from "./encoder.js";
import { staticEmbeddingProvider } from "./static.js";

/**
 * Embedding providers. Two local models, both made offline from all-MiniLM-L6-v2 and kept in the
 * repository (models/minilm-l6-v2, nothing downloaded at run time):
 * - the encoder (encoder.ts, `minilm-l6-v2-int8-v1`, 384 dimensions): `createEmbedder`, for what is embedded
 *   a few texts at a time (the embed route, context pages and their recall);
 * - its static companion (static.ts, `minilm-l6-v2-static-v2`, 384 dimensions): `createBulkEmbedder`, for
 *   what is embedded row after row (enrichment of every stored original, the analysis's vector ranking
 *   over those rows, sweeps), where the encoder would be too slow.
 * With EMBEDDINGS_URL both are the OpenAI-compatible `/embeddings` endpoint instead. Vectors of different
 * models are never compared: every stored vector carries its model (`embedding_model`).
 */
export interface EmbeddingProvider {
  readonly model: string;
  readonly dimensions: number;
  embed(texts: string[]): Promise<number[][]>;
}

export function openAiCompatibleEmbedder(options: {
  baseUrl: string;
  apiKey?: string;
  model: string;
  dimensions?: number;
  timeoutMs?: number;
}): EmbeddingProvider {
  let dimensions = options.dimensions ?? 0;
  return {
    model: options.model,
    get dimensions() {
      return dimensions;
    },
    async embed(texts) {
      if (texts.length === 0) return [];
      let res: Response;
      try {
        res = await outboundFetch(
          `${options.baseUrl.replace(/\/$/, "")}/embeddings`,
          {
            method: "POST",
            headers: {
              "content-type": "application/json",
              ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
            },
            body: JSON.stringify({ model: options.model, input: texts }),
            signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
          },
          trustedEndpoint(options.baseUrl),
        );
      } catch (err) {
        throw new AppError("upstream_unavailable", "The embeddings provider could not be reached.", { cause: err });
      }
      if (!res.ok) await res.body?.cancel().catch(() => undefined);
      if (res.status >= 500 || res.status === 429) {
        throw new AppError("upstream_unavailable", `The embeddings provider answered ${res.status}.`, {
          headers: retryAfterHeader(parseRetryAfterSeconds(res.headers.get("retry-after"))),
        });
      }
      if (!res.ok) throw new AppError("upstream_error", `The embeddings provider refused the request (${res.status}).`);
      let body: { data?: { embedding?: unknown; index?: number }[] } | null;
      try {
        body = (await res.json()) as typeof body;
      } catch (err) {
        if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError")) {
          throw new AppError("upstream_unavailable", "The embeddings provider timed out.", { cause: err });
        }
        body = null;
      }
      const data = body?.data;
      if (!Array.isArray(data) || data.length !== texts.length || !data.every((d) => typeof d === "object" && d !== null)) {
        throw new AppError("upstream_error", "The embeddings provider answered in an unexpected format.");
      }
      const ordered = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      const vectors = ordered.map((d) => d.embedding);
      const width = Array.isArray(vectors[0]) ? vectors[0].length : 0;
      const wellFormed = (v: unknown): v is number[] =>
        Array.isArray(v) && v.length > 0 && v.length === width && v.every((x) => typeof x === "number" && Number.isFinite(x));
      if (!vectors.every(wellFormed)) {
        throw new AppError("upstream_error", "The embeddings provider answered in an unexpected format.");
      }
      dimensions = vectors[0]?.length ?? dimensions;
      return vectors;
    },
  };
}

function remoteEmbedder(config: Config & { EMBEDDINGS_URL: string }): EmbeddingProvider {
  return openAiCompatibleEmbedder({
    baseUrl: config.EMBEDDINGS_URL,
    model: config.EMBEDDINGS_MODEL,
    timeoutMs: config.EMBEDDINGS_TIMEOUT_MS,
    ...(config.EMBEDDINGS_API_KEY ? { apiKey: config.EMBEDDINGS_API_KEY } : {}),
  });
}

/** The embedder of texts embedded a few at a time: the encoder, or the configured endpoint. */
export function createEmbedder(config: Config): EmbeddingProvider {
  if (config.EMBEDDINGS_URL) return remoteEmbedder({ ...config, EMBEDDINGS_URL: config.EMBEDDINGS_URL });
  return encoderEmbedder({ threads: config.EMBEDDINGS_THREADS });
}

/** The embedder of stored originals, embedded in bulk: the static companion, or the configured endpoint. */
export function createBulkEmbedder(config: Config): EmbeddingProvider {
  if (config.EMBEDDINGS_URL) return remoteEmbedder({ ...config, EMBEDDINGS_URL: config.EMBEDDINGS_URL });
  return staticEmbeddingProvider();
}

const shared = new WeakMap<Config, EmbeddingProvider>();

/** One provider per configuration, shared by every domain of a process. */
export function embedderFor(config: Config): EmbeddingProvider {
  let embedder = shared.get(config);
  if (!embedder) {
    embedder = createEmbedder(config);
    shared.set(config, embedder);
  }
  return embedder;
}
