import type { Response } from "undici";
import type { Config } from "../../platform/config.js";
import { AppError } from "../../platform/errors.js";
import { parseRetryAfterSeconds, retryAfterHeader } from "../../platform/http/retry-after.js";
import { outboundFetch, trustedEndpoint } from "../../platform/outbound.js";
import { hashingEmbedder } from "./hashing.js";

/**
 * Embedding providers. The default is a local, deterministic feature-hashing embedder
 * (no model download); an OpenAI-compatible `/embeddings` endpoint is used when
 * EMBEDDINGS_URL is configured.
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

export function createEmbedder(config: Config): EmbeddingProvider {
  if (config.EMBEDDINGS_URL) {
    return openAiCompatibleEmbedder({
      baseUrl: config.EMBEDDINGS_URL,
      model: config.EMBEDDINGS_MODEL,
      timeoutMs: config.EMBEDDINGS_TIMEOUT_MS,
      ...(config.EMBEDDINGS_API_KEY ? { apiKey: config.EMBEDDINGS_API_KEY } : {}),
    });
  }
  return hashingEmbedder();
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
