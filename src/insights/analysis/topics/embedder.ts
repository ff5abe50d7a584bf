import { hashingVector } from "../../embed/hashing.js";
import type { PhraseEmbedder } from "./discover.js";

/** The embedder topics are grouped with: feature hashing until a trained static model is in place. */
export function phraseEmbedder(): PhraseEmbedder {
  return (texts) => texts.map((t) => hashingVector(t));
}
