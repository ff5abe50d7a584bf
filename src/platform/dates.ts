import { z } from "zod";

/**
 * Dates and datetimes in requests: one rule for every field that takes one.
 *
 * Accepted: an ISO 8601 date (`2026-01-31`, read as the start of that day in UTC) or
 * datetime (`2026-01-31T09:30:00Z`, with `Z`, an offset, or none: read as UTC), naming a
 * moment in the years 0001–9999 in UTC. PostgreSQL's timestamptz reaches further
 * (4713 BC to 294276 AD), but has no year 0, and JavaScript writes years outside
 * 0000–9999 with a sign and six digits (`+010000-…`), which it does not read: the
 * four-digit years of ISO 8601's ordinary form are what both sides read the same way.
 * An offset is at most ±15:59, the largest PostgreSQL reads (real zones stay within
 * ±14:00). Everything else is a 422 at the field.
 */
export const EARLIEST_INSTANT = new Date("0001-01-01T00:00:00.000Z");
export const LATEST_INSTANT = new Date("9999-12-31T23:59:59.999Z");

/** `optional`: dates, and datetimes with or without a zone; `required`: datetimes with `Z` or an offset only. */
export type ZoneRule = "optional" | "required";

const DATE = z.iso.date();
const DATETIME = { optional: z.iso.datetime({ offset: true, local: true }), required: z.iso.datetime({ offset: true }) };

/** True when a moment is one a request may name (and so one the database stores). */
export function isStorableInstant(date: Date): boolean {
  const t = date.getTime();
  return !Number.isNaN(t) && t >= EARLIEST_INSTANT.getTime() && t <= LATEST_INSTANT.getTime();
}

const OFFSET = /[+-](\d{2}):\d{2}$/;
const MAX_OFFSET_HOURS = 15;

export type InstantProblem = "format" | "offset" | "range";

/** The moment an ISO 8601 value names, or why it names none a request may use. */
export function readInstant(value: string, zone: ZoneRule = "optional"): Date | InstantProblem {
  let date: Date;
  if (zone === "optional" && DATE.safeParse(value).success) {
    date = new Date(`${value}T00:00:00Z`);
  } else if (DATETIME[zone].safeParse(value).success) {
    const time = value.slice(value.indexOf("T") + 1);
    if (Number(OFFSET.exec(time)?.[1] ?? 0) > MAX_OFFSET_HOURS) return "offset";
    date = new Date(/[Z+-]/.test(time) ? value : `${value}Z`);
  } else {
    return "format";
  }
  if (Number.isNaN(date.getTime())) return "format";
  return isStorableInstant(date) ? date : "range";
}

const FORMAT_MESSAGE: Record<ZoneRule, string> = {
  optional: "Input should be a valid ISO 8601 date or datetime",
  required: "Input should be a valid ISO 8601 datetime with 'Z' or an offset",
};

function addIssue(ctx: z.RefinementCtx, problem: InstantProblem, zone: ZoneRule): void {
  const issues: Record<InstantProblem, { message: string; type: string }> = {
    format: { message: FORMAT_MESSAGE[zone], type: "datetime_parsing" },
    offset: { message: "Input should have a UTC offset between -15:59 and +15:59", type: "datetime_parsing" },
    range: { message: "Input should be a moment in the years 0001 to 9999 (UTC)", type: "datetime_out_of_range" },
  };
  const { message, type } = issues[problem];
  ctx.addIssue({ code: "custom", message, params: { type } });
}

export interface DateFieldOptions {
  zone?: ZoneRule;
  /** Longest accepted value, in characters. */
  max?: number;
}

/** A date or datetime under the rule above, kept as the string sent. */
export function isoDateTimeString(options: DateFieldOptions = {}) {
  const zone = options.zone ?? "optional";
  const base = options.max === undefined ? z.string() : z.string().max(options.max);
  return base.superRefine((value, ctx) => {
    const read = readInstant(value, zone);
    if (typeof read === "string") addIssue(ctx, read, zone);
  });
}

/** A date or datetime under the rule above, as the moment it names. */
export function isoDateTime(options: DateFieldOptions = {}) {
  const zone = options.zone ?? "optional";
  const base = options.max === undefined ? z.string() : z.string().max(options.max);
  return base.transform((value, ctx) => {
    const read = readInstant(value, zone);
    if (typeof read !== "string") return read;
    addIssue(ctx, read, zone);
    return z.NEVER;
  });
}
