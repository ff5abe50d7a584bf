import { z } from "zod";

/**
 * `POST /agent/v1/content/embed`. The spec leaves the bounds of `text` open: 1 to 32,000
 * characters (about 8k tokens of English, the input limit of common embedding models),
 * with at least one visible character.
 */
export const EMBED_TEXT_MAX = 32_000;

export const EmbedBody = z.object({
  text: z
    .string()
    .min(1)
    .max(EMBED_TEXT_MAX)
    .refine((s) => s.length === 0 || /\S/u.test(s), { message: "Text must contain at least one non-whitespace character" }),
});

export const EmbedResponse = z.object({
  embedding: z.array(z.number()),
  model: z.string(),
  dimensions: z.number().int(),
});

export type EmbedResponse = z.infer<typeof EmbedResponse>;
