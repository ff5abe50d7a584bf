import { z } from "zod";
import { ValidationFailed } from "../../platform/errors.js";
import { pathId, queryInt } from "../../platform/validation.js";
import { THEME_POLARITIES, UnavailableCitation } from "./schemas.js";

/**
 * `GET /agent/v1/analysis/{analysis_id}/insights/{n}/sources`: every source behind one insight, a page
 * at a time (theme-sources-read.ts).
 */
export const SOURCE_SORTS = ["representative", "newest"] as const;
export type SourceSort = (typeof SOURCE_SORTS)[number];
export const DEFAULT_SOURCES_LIMIT = 50;
export const MAX_SOURCES_LIMIT = 200;

/**
 * A page's position: in the sample's rank order (`sample`), in the rest of the scope newest first
 * (`scope`, after the sample in the representative order), or in the whole list newest first (`newest`).
 */
export type SourcesCursor =
  | { kind: "sample"; rank: number }
  | { kind: "scope"; seenAt: Date; id: string }
  | { kind: "newest"; seenAt: Date; id: string };

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NOT_A_CURSOR = "Input should be a next_cursor value from a previous page of this list";
const CODES = { sample: "r", scope: "s", newest: "n" } as const;

export function encodeSourcesCursor(cursor: SourcesCursor): string {
  const parts = cursor.kind === "sample" ? [CODES.sample, cursor.rank] : [CODES[cursor.kind], cursor.seenAt.toISOString(), cursor.id];
  return Buffer.from(JSON.stringify(parts), "utf8").toString("base64url");
}

/** The position a token names, or null when it is not a token of this list. */
export function readSourcesCursor(raw: string): SourcesCursor | null {
  try {
    const parts = JSON.parse(Buffer.from(raw, "base64url").toString("utf8")) as unknown[];
    if (!Array.isArray(parts)) return null;
    const [code, a, b] = parts;
    if (code === CODES.sample && parts.length === 2 && Number.isSafeInteger(a) && (a as number) >= 0) {
      return { kind: "sample", rank: a as number };
    }
    const at = typeof a === "string" ? new Date(a) : null;
    if ((code === CODES.scope || code === CODES.newest) && parts.length === 3 && at && !Number.isNaN(at.getTime())) {
      if (typeof b === "string" && UUID_RE.test(b)) return { kind: code === CODES.scope ? "scope" : "newest", seenAt: at, id: b };
    }
  } catch {
    // not JSON: not a cursor
  }
  return null;
}

const cursorParam = z
  .string()
  .min(1)
  .max(300)
  .transform((raw, ctx) => {
    const cursor = readSourcesCursor(raw);
    if (cursor) return cursor;
    ctx.addIssue({ code: "custom", message: NOT_A_CURSOR, params: { type: "value_error" } });
    return z.NEVER;
  });

export const SourcesParams = z.object({
  analysis_id: pathId("Analysis"),
  // Read after the analysis is found (a 404 for one the caller cannot see comes first), then a 422 when not a number.
  n: z.string().max(100).describe("The insight's `id` in the result: its number, 1-based"),
});

export const SourcesQuery = z.object({
  sort: z
    .enum(SOURCE_SORTS)
    .optional()
    .describe(
      "representative (default): the quoted sources first, then the rest of the sample by how well a statement of theirs fits the theme, then the rest of the scope newest first; newest: by publication (else storage) time",
    ),
  limit: queryInt(1, MAX_SOURCES_LIMIT)
    .optional()
    .describe(`Sources per page: 1 to ${MAX_SOURCES_LIMIT}, default ${DEFAULT_SOURCES_LIMIT}`),
  cursor: cursorParam.optional().describe("The next_cursor of the previous page (of the same sort)"),
});
export type SourcesQuery = z.output<typeof SourcesQuery>;

/** The insight number of the path: a 422 at `["path", "n"]` unless a positive integer. */
export function insightNumber(raw: string): number {
  if (/^[1-9]\d{0,5}$/.test(raw)) return Number(raw);
  throw new ValidationFailed([
    { loc: ["path", "n"], msg: "Input should be the insight's id: a whole number from 1 (its place in the result)", type: "int_parsing" },
  ]);
}

export const ThemeSourceItem = z.object({
  content_id: z.string(),
  title: z.string(),
  platform: z.string(),
  author: z.string(),
  published_at: z.string().nullable(),
  url: z.string(),
  feedback_kind: z.string().nullable().describe("What the original is (bug_report, feature_request, …); null until enriched"),
  quote: z.string().describe("Its best statement for the theme, verbatim: the stored original between the offsets"),
  start_offset: z.number().int().describe("Code-point offsets of the quote in the original"),
  end_offset: z.number().int(),
  opinion_unit_id: z.string().nullable(),
  in_sample: z.boolean().describe("The analysed sample held it (otherwise it is one of the rest of the scope the count covered)"),
  evidence_number: z.number().int().nullable().describe("The number of the insight's quote from it, when the insight quotes it"),
  unavailable: UnavailableCitation.optional().describe("Deleted or erased since the analysis ran: no title, quote, url or author"),
});
export type ThemeSourceItem = z.infer<typeof ThemeSourceItem>;

export const ThemeSourcesPage = z.object({
  analysis_id: z.string(),
  insight: z.object({
    id: z.number().int(),
    title: z.string(),
    aspect: z.string().nullable(),
    polarity: z.enum(THEME_POLARITIES),
    sources: z.number().int(),
  }),
  sort: z.enum(SOURCE_SORTS),
  total: z.number().int().describe("The number of sources the insight states"),
  sample: z.number().int().describe("Its sources in the analysed sample, each listed (first, in the representative order)"),
  listed: z.number().int().nullable().describe("Sources the whole list holds when known; null when it continues into the scope"),
  unavailable: z.number().int().describe("Sources of the sample deleted or erased since the analysis ran, listed without their words"),
  complete: z.boolean().describe("The list is exactly the sources the count counted (less none)"),
  count_basis: z.string().describe("What the count counts and what is listed, and why the two differ when they do"),
  sources: z.array(ThemeSourceItem),
  limit: z.number().int(),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
});
export type ThemeSourcesPage = z.infer<typeof ThemeSourcesPage>;
