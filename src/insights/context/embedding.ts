import type { Db } from "../../platform/db.js";
import { AppError } from "../../platform/errors.js";
import type { EmbeddingProvider } from "../embed/provider.js";
import { storeEmbedding } from "./repo.js";

/**
 * What a page's embedding is computed from: its title and the head of its content, cut
 * to fit the input limit of common embedding models (keyword ranking reads the rest).
 */
export const PAGE_EMBED_CHARS = 8000;

export const pageEmbeddingText = (title: string, content: string) => `${title}\n\n${content}`.slice(0, PAGE_EMBED_CHARS);

/**
 * Embeds a page's text; a provider failure (502/503) yields null so the save can go on
 * without a vector. Anything else is a bug and propagates.
 */
export async function tryEmbedPage(embedder: EmbeddingProvider, title: string, content: string): Promise<number[] | null> {
  try {
    const [vector] = await embedder.embed([pageEmbeddingText(title, content)]);
    return vector ?? null;
  } catch (err) {
    if (err instanceof AppError && (err.code === "upstream_unavailable" || err.code === "upstream_error")) return null;
    throw err;
  }
}

/**
 * The `context.embed.v1` job: embeds the page as it is now and stores the vector if no
 * newer save replaced it meanwhile. Provider failures throw, so the job is retried.
 */
export async function embedStoredPage(
  db: Db,
  embedder: EmbeddingProvider,
  pageId: string,
): Promise<{ status: "embedded" | "superseded" | "gone" }> {
  const page = await db.page.findUnique({ where: { id: pageId }, select: { title: true, content: true, version: true } });
  if (!page) return { status: "gone" };
  const [vector] = await embedder.embed([pageEmbeddingText(page.title, page.content)]);
  if (!vector) throw new Error("embedding provider returned no vector");
  const stored = await storeEmbedding(db, pageId, page.version, vector, embedder.model);
  return { status: stored ? "embedded" : "superseded" };
}
