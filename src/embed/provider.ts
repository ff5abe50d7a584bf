import type { Config } from "../platform/config.js";
import { AppError } from "../platform/errors.js";
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
        res = await fetch(`${options.baseUrl.replace(/\/$/, "")}/embeddings`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify({ model: options.model, input: texts }),
          signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
        });
      } catch (err) {
        throw new AppError("upstream_unavailable", "The embeddings provider could not be reached.", { cause: err });
      }
      if (res.status >= 500 || res.status === 429) {
        throw new AppError("upstream_unavailable", `The embeddings provider answered ${res.status}.`);
      }
      if (!res.ok) throw new AppError("upstream_error", `The embeddings provider refused the request (${res.status}).`);
      const body = (await res.json().catch(() => null)) as { data?: { embedding?: unknown; index?: number }[] } | null;
      const data = body?.data;
      if (!Array.isArray(data) || data.length !== texts.length) {
        throw new AppError("upstream_error", "The embeddings provider answered in an unexpected format.");
      }
      const ordered = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      const vectors = ordered.map((d) => d.embedding);
      if (!vectors.every((v): v is number[] => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "number"))) {
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
      ...(config.EMBEDDINGS_API_KEY ? { apiKey: config.EMBEDDINGS_API_KEY } : {}),
    });
  }
  return hashingEmbedder();
}
