import { embedStoredPage } from "../src/insights/context/embedding.js";
import { embedderFor } from "../src/insights/embed/provider.js";
import type { Processor } from "./runtime.js";

/** Embeds a saved page whose embedding could not be computed when it was saved. */
export const contextEmbedProcessor: Processor<"context.embed.v1"> = (payload, { deps }) =>
  embedStoredPage(deps.db, embedderFor(deps.config), payload.pageId);
