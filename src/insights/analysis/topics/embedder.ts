import { staticEmbedder } from "../../embed/static.js";
import type { PhraseEmbedder } from "./discover.js";

/**
 * The embedder topics are grouped with: the static companion of the sentence encoder (embed/static.ts),
 * synchronous and fast enough for the few hundred phrases an analysis groups.
 */
export function phraseEmbedder(): PhraseEmbedder {
  const embedder = staticEmbedder();
  return (texts) => embedder.embedSync(texts);
}
