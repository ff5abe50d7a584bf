import { AUTH } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { embedderFor } from "./provider.js";
import { EmbedBody, EmbedResponse } from "./schemas.js";
import { embedText } from "./service.js";

export const embedRoutes = (deps: AppDeps) => {
  const embedder = embedderFor(deps.config);
  return [
    defineRoute({
      method: "post",
      path: "/agent/v1/content/embed",
      summary: "Embed a text with the configured embedding model",
      tags: ["embed"],
      auth: AUTH.ingest,
      role: "account",
      body: EmbedBody,
      responses: {
        200: { description: "The embedding", schema: EmbedResponse },
        502: { description: "The embeddings provider answered badly" },
        503: { description: "The embeddings provider is unreachable or timed out" },
      },
      handler: async ({ body }) => ({ body: await embedText(embedder, body.text) }),
    }),
  ];
};
