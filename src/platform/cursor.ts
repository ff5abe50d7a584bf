import { z } from "zod";
import { ValidationFailed } from "./errors.js";

/**
 * Keyset cursors for lists ordered by `(created_at, id)`: a page's `next_cursor` names its last row,
 * and the next page holds the rows strictly past it in the list's order (older rows for a newest-first
 * list, newer ones for an oldest-first one). Rows added or removed meanwhile neither shift nor repeat
 * what is left. The token is opaque to clients: base64url of `[created_at ISO string, id]`. Raw
 * export and the analysis list read the same token.
 */
export interface KeysetCursor {
  createdAt: Date;
  id: string;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NOT_A_CURSOR = "Input should be a next_cursor value from a previous page";

export function encodeCursor(cursor: KeysetCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt.toISOString(), cursor.id]), "utf8").toString("base64url");
}

/** The position a token names, or null when it is not a token this service handed out. */
export function readCursor(raw: string): KeysetCursor | null {
  try {
    const [at, id] = JSON.parse(Buffer.from(raw, "base64url").toString("utf8")) as [unknown, unknown];
    const createdAt = new Date(String(at));
    if (typeof at === "string" && typeof id === "string" && UUID_RE.test(id) && !Number.isNaN(createdAt.getTime())) {
      return { createdAt, id };
    }
  } catch {
    // not JSON, or not a pair: not a cursor
  }
  return null;
}

/** The position a `cursor` query parameter names: a 422 at `["query", "cursor"]` otherwise. */
export function decodeCursor(raw: string): KeysetCursor {
  const cursor = readCursor(raw);
  if (cursor) return cursor;
  throw new ValidationFailed([{ loc: ["query", "cursor"], msg: NOT_A_CURSOR, type: "value_error" }]);
}

/** A `cursor` query parameter, decoded while the query is validated (a 422 at the field, with the query's other issues). */
export const cursorParam = () =>
  z
    .string()
    .min(1)
    .max(200)
    .transform((raw, ctx) => {
      const cursor = readCursor(raw);
      if (cursor) return cursor;
      ctx.addIssue({ code: "custom", message: NOT_A_CURSOR, params: { type: "value_error" } });
      return z.NEVER;
    });
