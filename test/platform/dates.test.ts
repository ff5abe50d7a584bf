import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { SearchBody } from "../../src/insights/search/schemas.js";
import { bound } from "../../src/intake/collection/collectors/types.js";
import { CoverageRequestBody } from "../../src/intake/coverage/schemas.js";
import { IngestRequestBody } from "../../src/intake/ingest/schemas.js";
import { SyncBody } from "../../src/intake/notes/schemas.js";
import { ValidationFailed } from "../../src/platform/errors.js";
import { parseInput } from "../../src/platform/validation.js";
import { bearer, createEntityFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * Every date field of every request takes the same dates: ISO 8601 dates and datetimes
 * naming a moment in the years 0001–9999 (UTC), each read the way PostgreSQL reads it.
 * Anything else is a 422 at the field, never a database error.
 */
let h: Harness;
let token: string;
let entityId: string;

beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
  entityId = (await createEntityFor(h, token)).id;
});
afterAll(() => h.close());

interface DateField {
  name: string;
  schema: z.ZodType;
  body: (value: string) => Record<string, unknown>;
  loc: (string | number)[];
  /** Whether the field takes dates and zoneless datetimes, or only datetimes with a zone. */
  zone: "optional" | "required";
  /** What the service keeps: the moment (a Date), or the string as sent. */
  read: (parsed: Record<string, unknown>) => unknown;
}

const source = (published_at: string) => ({ platform: "web", content: "A post.", published_at });
const FIELDS: DateField[] = [
  {
    name: "search date_from",
    schema: SearchBody,
    body: (v) => ({ query: "pricing", date_from: v }),
    loc: ["date_from"],
    zone: "optional",
    read: (p) => p.date_from,
  },
  {
    name: "ingest source published_at",
    schema: IngestRequestBody,
    body: (v) => ({ entity_id: "e", sources: [source(v)] }),
    loc: ["sources", 0, "published_at"],
    zone: "optional",
    read: (p) => (p.sources as { published_at: Date }[])[0]?.published_at,
  },
  {
    name: "ingest comment published_at",
    schema: IngestRequestBody,
    body: (v) => ({ entity_id: "e", sources: [{ ...source("2026-01-01"), comments: [{ text: "Agreed.", published_at: v }] }] }),
    loc: ["sources", 0, "comments", 0, "published_at"],
    zone: "optional",
    read: (p) => (p.sources as { comments: { published_at: Date }[] }[])[0]?.comments[0]?.published_at,
  },
  {
    name: "coverage started_at",
    schema: CoverageRequestBody,
    body: (v) => ({ entity_id: "e", coverage_state: "sampled", started_at: v }),
    loc: ["started_at"],
    zone: "optional",
    read: (p) => p.started_at,
  },
  {
    name: "coverage finished_at",
    schema: CoverageRequestBody,
    body: (v) => ({ entity_id: "e", coverage_state: "sampled", finished_at: v }),
    loc: ["finished_at"],
    zone: "optional",
    read: (p) => p.finished_at,
  },
  {
    name: "meeting-note import created_after",
    schema: SyncBody,
    body: (v) => ({ api_key: "provider-key-0001", entity_id: "e", created_after: v }),
    loc: ["created_after"],
    zone: "required",
    read: (p) => p.created_after,
  },
];

/** A generated date string, with what an independent reading of it says. */
interface Candidate {
  text: string;
  /** The moment it names when it is well formed ISO 8601 with a four-digit year and an offset PostgreSQL reads; else undefined. */
  instant: number | undefined;
  /**
   * The same moment as PostgreSQL reads the text: it rounds the fraction to microseconds, so digits past
   * the sixth can carry into the next millisecond (".00099950" is 1 ms), where `instant` truncates.
   */
  pgInstant: number | undefined;
  hasTime: boolean;
  hasZone: boolean;
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");
const daysIn = (y: number, m: number) =>
  [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1] ?? 0;

const yearText = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 9999 }).map((y) => ({ text: pad(y, 4), year: y as number | undefined })) },
  { weight: 3, arbitrary: fc.constantFrom(0, 1, 9999).map((y) => ({ text: pad(y, 4), year: y as number | undefined })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("+010000", "-000001", "+000000", "10000", "-0001", "99", "+2026").map((text) => ({ text, year: undefined })),
  },
);

const candidate: fc.Arbitrary<Candidate> = fc
  .record({
    year: yearText,
    month: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 1, max: 12 }) }, { weight: 1, arbitrary: fc.constantFrom(0, 13) }),
    day: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 1, max: 28 }) }, { weight: 2, arbitrary: fc.integer({ min: 0, max: 32 }) }),
    time: fc.option(
      fc.record({
        hour: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 23 }) }, { weight: 1, arbitrary: fc.constant(24) }),
        minute: fc.integer({ min: 0, max: 60 }),
        second: fc.integer({ min: 0, max: 60 }),
        fraction: fc.option(fc.stringMatching(/^\d{1,9}$/), { nil: undefined }),
      }),
      { nil: undefined, freq: 3 },
    ),
    zone: fc.option(
      fc.oneof(
        fc.constant("Z"),
        fc.record({ sign: fc.constantFrom("+", "-"), hours: fc.integer({ min: 0, max: 24 }), minutes: fc.constantFrom(0, 30, 45, 60) }),
      ),
      { nil: undefined, freq: 3 },
    ),
  })
  .map(({ year, month, day, time, zone }) => {
    let text = `${year.text}-${pad(month, 2)}-${pad(day, 2)}`;
    let wellFormed = year.year !== undefined && month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year.year, month);
    let offsetMinutes = 0;
    const moment = new Date(0);
    let carry = 0;
    if (year.year !== undefined) moment.setUTCFullYear(year.year, month - 1, day);
    if (time) {
      text += `T${pad(time.hour, 2)}:${pad(time.minute, 2)}:${pad(time.second, 2)}${time.fraction === undefined ? "" : `.${time.fraction}`}`;
      wellFormed &&= time.hour <= 23 && time.minute <= 59 && time.second <= 59;
      moment.setUTCHours(time.hour, time.minute, time.second, Number((time.fraction ?? "0").padEnd(3, "0").slice(0, 3)));
      const fraction = (time.fraction ?? "0").padEnd(9, "0");
      carry = Math.floor(Math.round(Number(`0.${fraction}`) * 1e6) / 1000) - Number(fraction.slice(0, 3));
      if (zone === "Z") text += "Z";
      else if (zone) {
        text += `${zone.sign}${pad(zone.hours, 2)}:${pad(zone.minutes, 2)}`;
        // ISO 8601 allows offsets to ±23:59; PostgreSQL reads them to ±15:59.
        wellFormed &&= zone.hours <= 15 && zone.minutes <= 59;
        offsetMinutes = (zone.sign === "+" ? 1 : -1) * (zone.hours * 60 + zone.minutes);
      }
    }
    return {
      text,
      instant: wellFormed ? moment.getTime() - offsetMinutes * 60_000 : undefined,
      pgInstant: wellFormed ? moment.getTime() - offsetMinutes * 60_000 + carry : undefined,
      hasTime: time !== undefined,
      hasZone: time !== undefined && zone !== undefined,
    };
  });

const EARLIEST = Date.parse("0001-01-01T00:00:00.000Z");
const LATEST = Date.parse("9999-12-31T23:59:59.999Z");

/** True when the field must take the value: well formed, in range, with a zone if the field needs one. */
function acceptable(c: Candidate, field: DateField): boolean {
  if (c.instant === undefined || c.instant < EARLIEST || c.instant > LATEST) return false;
  return field.zone === "optional" || c.hasZone;
}

/** PostgreSQL's own reading of what the service keeps (in a UTC session, as the service reads zoneless values). */
async function postgresReads(kept: unknown): Promise<number> {
  const [, rows] = await h.deps.db.$transaction([
    h.deps.db.$executeRaw`SET LOCAL TIME ZONE 'UTC'`,
    kept instanceof Date
      ? h.deps.db.$queryRaw<{ t: Date }[]>`SELECT ${kept}::timestamptz AS t`
      : h.deps.db.$queryRaw<{ t: Date }[]>`SELECT ${String(kept)}::text::timestamptz AS t`,
  ]);
  return (rows[0] as { t: Date }).t.getTime();
}

describe("date fields", () => {
  it("take exactly the ISO 8601 dates in 0001–9999 (UTC), read as PostgreSQL reads them, in every schema", async () => {
    await fc.assert(
      fc.asyncProperty(candidate, async (c) => {
        for (const field of FIELDS) {
          const where = `${field.name} ${JSON.stringify(c.text)}`;
          if (acceptable(c, field)) {
            const parsed = parseInput(field.schema, field.body(c.text), "body") as Record<string, unknown>;
            const kept = field.read(parsed);
            // A moment the service parsed is kept to the millisecond; a string kept as sent is read by PostgreSQL.
            if (kept instanceof Date) expect(kept.getTime(), where).toBe(c.instant);
            else expect(kept, where).toBe(c.text);
            expect(await postgresReads(kept), where).toBe(kept instanceof Date ? c.instant : c.pgInstant);
          } else {
            let failure: unknown;
            try {
              parseInput(field.schema, field.body(c.text), "body");
            } catch (err) {
              failure = err;
            }
            expect(failure, where).toBeInstanceOf(ValidationFailed);
            const issues = (failure as ValidationFailed).issues;
            expect(issues, where).toEqual([
              { loc: ["body", ...field.loc], msg: expect.any(String), type: expect.stringMatching(/^datetime_(parsing|out_of_range)$/) },
            ]);
          }
        }
      }),
      { numRuns: 400 },
    );
  }, 60_000);

  it("includes the edges of the range and refuses just beyond them", () => {
    const accepts = (text: string) => SearchBody.safeParse({ query: "q", date_from: text }).success;
    for (const text of ["0001-01-01", "0001-01-01T00:00:00Z", "0001-01-01T00:00:00-01:00", "9999-12-31", "9999-12-31T23:59:59.999Z"]) {
      expect(accepts(text), text).toBe(true);
    }
    for (const text of [
      "0000-01-01",
      "0000-12-31T23:59:59Z",
      "0001-01-01T00:00:00+00:01",
      "9999-12-31T23:00:00-01:00",
      "+010000-01-01T00:00:00Z",
      "-000001-01-01T00:00:00Z",
    ]) {
      expect(accepts(text), text).toBe(false);
    }
  });
});

describe("dates from collectors", () => {
  it("drop a date the ingest would refuse, so the item is still stored", () => {
    expect(bound.date("2026-01-02T03:04:05Z")).toBe("2026-01-02T03:04:05.000Z");
    expect(bound.date("0000-06-01T00:00:00Z")).toBeNull();
    expect(bound.date(-62_200_000_000)).toBeNull();
    expect(bound.date(253_402_300_800)).toBeNull();
    expect(bound.date("not a date")).toBeNull();
  });
});

describe("date fields over HTTP", () => {
  const post = (path: string, body: object) => h.http.post(path).set(bearer(token)).send(body);
  const refusedAt = (res: { status: number; body: { detail: { loc: unknown[]; type: string }[] } }, loc: unknown[]) => {
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc, type: "datetime_out_of_range" })]);
  };

  it("answers a year-0000 date with a 422 at its field on search, ingest, coverage and note import", async () => {
    for (const zero of ["0000-01-01", "0000-01-01T00:00:00Z"]) {
      refusedAt(await post("/agent/v1/search", { query: "pricing", date_from: zero }), ["body", "date_from"]);
      refusedAt(await post("/agent/v1/ingest/content", { entity_id: entityId, sources: [source(zero)] }), [
        "body",
        "sources",
        0,
        "published_at",
      ]);
      refusedAt(
        await post("/agent/v1/ingest/content", {
          entity_id: entityId,
          sources: [{ ...source("2026-01-01"), comments: [{ text: "Agreed.", published_at: zero }] }],
        }),
        ["body", "sources", 0, "comments", 0, "published_at"],
      );
      refusedAt(await post("/agent/v1/ingest/coverage", { entity_id: entityId, coverage_state: "sampled", finished_at: zero }), [
        "body",
        "finished_at",
      ]);
    }
    refusedAt(
      await post("/api/meetingnotes/sync", { api_key: "provider-key-0001", entity_id: entityId, created_after: "0000-01-01T00:00:00Z" }),
      ["body", "created_after"],
    );
  });

  it("stores and searches from the first and last days of the range", async () => {
    const stored = await post("/agent/v1/ingest/content", {
      entity_id: entityId,
      sources: [
        { ...source("0001-01-01"), id: "first-day" },
        { ...source("9999-12-31T23:59:59Z"), id: "last-day" },
      ],
    });
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    const rows = await h.deps.db.content.findMany({
      where: { id: { in: stored.body.parent_content_ids } },
      orderBy: { publishedAt: "asc" },
    });
    expect(rows.map((r) => r.publishedAt?.toISOString())).toEqual(["0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.000Z"]);
    for (const date_from of ["0001-01-01", "9999-12-31T23:59:59.999Z"]) {
      expect((await post("/agent/v1/search", { query: "post", date_from })).status, date_from).toBe(200);
    }
  });
});
