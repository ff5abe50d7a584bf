import type { EmbeddingProvider } from "./provider.js";
import type { EmbedResponse } from "./schemas.js";

/** Embeds one text with the configured provider. Provider failures surface as 502/503. */
export async function embedText(embedder: EmbeddingProvider, text: string): Promise<EmbedResponse> {
  const [embedding] = await embedder.embed([text]);
  if (!embedding) throw new Error("embedding provider returned no vector");
  return { embedding, model: embedder.model, dimensions: embedding.length };
}
