import fc, { type Arbitrary } from "fast-check";
import type { z } from "zod";
import { findUnsafeInput } from "../../../src/platform/validation.js";

/**
 * fast-check arbitraries derived from the routes' own zod schemas, so the fuzz tests
 * follow every route (including ones added later) without a hand-written generator.
 *
 * `valueFor(schema)` produces values that are *mostly* valid: strings respect length and
 * pattern checks, numbers their bounds, enums their members. Strings draw from the full
 * Unicode range and sometimes carry the characters that break naive code (NUL, lone
 * surrogates, RTL marks, SQL and HTML metacharacters). `known` substitutes real ids for
 * fields of a given name (an `entity_id` the caller can see), so generated requests get
 * past the 404 and reach the services.
 */
export type Known = Record<string, () => Arbitrary<unknown>>;

interface Def {
  type: string;
  format?: string;
  checks?: { _zod: { def: CheckDef } }[];
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  entries?: Record<string, string | number>;
  values?: unknown[];
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  items?: z.ZodType[];
  pattern?: RegExp;
}

interface CheckDef {
  check: string;
  minimum?: number;
  maximum?: number;
  value?: number;
  inclusive?: boolean;
  format?: string;
  pattern?: RegExp;
  length?: number;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The strings most likely to break string handling, storage or rendering. */
export const NASTY_STRINGS = [
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff\ud800",
  "\u202e\u0000evil",
  "'; DROP TABLE content_store; --",
  "<script>alert(1)</script>",
  "$\u007bjndi:ldap://x}",
  "../../etc/passwd",
  "%00%ff%fe",
  "\r\n\r\nX-Injected: 1",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🧨 ＡＢＣ",
  "__proto__",
  "constructor",
  " ",
  "1e309",
  "-0",
  "NaN",
];

const MAX_GENERATED = 40;

function lengthBounds(def: Def): { min: number; max: number | undefined; pattern: RegExp | undefined } {
  let min = 0;
  let max: number | undefined;
  let pattern: RegExp | undefined = def.pattern;
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === "min_length" && c.minimum !== undefined) min = Math.max(min, c.minimum);
    if (c.check === "max_length" && c.maximum !== undefined) max = Math.min(max ?? Number.POSITIVE_INFINITY, c.maximum);
    if (c.check === "length_equals" && c.length !== undefined) {
      min = c.length;
      max = c.length;
    }
    if (c.check === "string_format" && c.format === "regex" && c.pattern) pattern = c.pattern;
  }
  return { min, max, pattern };
}

function stringArb(def: Def): Arbitrary<string> {
  switch (def.format) {
    case "uuid":
    case "guid":
      return fc.uuid();
    case "datetime":
      return fc.date({ min: new Date("1970-01-01"), max: new Date("2100-01-01"), noInvalidDate: true }).map((d) => d.toISOString());
    case "date":
      return fc
        .date({ min: new Date("1970-01-01"), max: new Date("2100-01-01"), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10));
    case "url":
      return fc.webUrl();
    case "email":
      return fc.emailAddress();
    default:
      break;
  }
  const { min, max, pattern } = lengthBounds(def);
  if (pattern) {
    return fc.stringMatching(pattern).filter((s) => s.length >= min && (max === undefined || s.length <= max));
  }
  const maxLength = Math.max(min, Math.min(max ?? MAX_GENERATED, min + MAX_GENERATED));
  const plain = fc.string({ unit: "grapheme", minLength: min, maxLength });
  const nasty = fc
    .constantFrom(...NASTY_STRINGS)
    .map((s) => (s.length >= min ? s : s + "x".repeat(min - s.length)))
    .filter((s) => max === undefined || s.length <= max);
  return fc.oneof({ weight: 4, arbitrary: plain }, { weight: 1, arbitrary: nasty });
}

function numberArb(def: Def, integer: boolean): Arbitrary<number> {
  let min: number | undefined;
  let max: number | undefined;
  let int = integer;
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === "greater_than" && c.value !== undefined) min = c.inclusive ? c.value : c.value + (int ? 1 : 1e-9);
    if (c.check === "less_than" && c.value !== undefined) max = c.inclusive ? c.value : c.value - (int ? 1 : 1e-9);
    if (c.check === "number_format" && (c.format === "safeint" || c.format === "int32" || c.format === "uint32")) int = true;
  }
  if (int) {
    return fc.integer({ min: Math.ceil(min ?? -1_000_000), max: Math.floor(max ?? 1_000_000) });
  }
  return fc.double({ min: min ?? -1e6, max: max ?? 1e6, noNaN: true, noDefaultInfinity: true });
}

/** The innermost input type of a schema (through optional/nullable/default/pipe). */
function inputDef(schema: z.ZodType): Def {
  let def = defOf(schema);
  for (;;) {
    if ((def.type === "optional" || def.type === "nullable" || def.type === "default" || def.type === "prefault") && def.innerType) {
      def = defOf(def.innerType);
    } else if (def.type === "pipe" && def.in) {
      def = defOf(def.in);
    } else {
      return def;
    }
  }
}

/** Mostly-valid values for a schema. */
export function valueFor(schema: z.ZodType, known: Known = {}, depth = 0): Arbitrary<unknown> {
  const def = defOf(schema);
  switch (def.type) {
    case "string":
      return stringArb(def);
    case "number":
      return numberArb(def, false);
    case "int":
      return numberArb(def, true);
    case "bigint":
      return fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "undefined":
    case "void":
      return fc.constant(undefined);
    case "literal":
      return fc.constantFrom(...(def.values ?? [null]));
    case "enum":
      return fc.constantFrom(...Object.values(def.entries ?? { x: "x" }));
    case "optional":
      return fc.option(valueFor(def.innerType as z.ZodType, known, depth), { nil: undefined, freq: 4 });
    case "nullable":
      return fc.option(valueFor(def.innerType as z.ZodType, known, depth), { nil: null, freq: 5 });
    case "default":
    case "prefault":
    case "catch":
    case "readonly":
    case "nonoptional":
      return valueFor(def.innerType as z.ZodType, known, depth);
    case "pipe": {
      // Digits-only integers in query strings: generate the integer the output accepts.
      const inner = inputDef(def.in as z.ZodType);
      const out = defOf(def.out as z.ZodType);
      if (inner.type === "string" && out.type === "number") return numberArb(out, true).map(String);
      return valueFor(def.in as z.ZodType, known, depth);
    }
    case "transform":
      return fc.jsonValue({ maxDepth: 1 });
    case "array": {
      const { min, max } = lengthBounds(def);
      if (depth > 4) return fc.constant([]);
      return fc.array(valueFor(def.element as z.ZodType, known, depth + 1), {
        minLength: min,
        maxLength: Math.max(min, Math.min(max ?? 3, min + 3)),
      });
    }
    case "tuple":
      return fc.tuple(...(def.items ?? []).map((s) => valueFor(s, known, depth + 1)));
    case "object":
      return objectFor(schema, known, depth);
    case "record":
      return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), depth > 3 ? fc.string() : fc.jsonValue({ maxDepth: 2 }), {
        maxKeys: 4,
      });
    case "union":
    case "discriminated_union":
      return fc.oneof(...(def.options ?? []).map((s) => valueFor(s, known, depth)));
    case "intersection":
      return fc.jsonValue({ maxDepth: 2 });
    default:
      // unknown, any, lazy, custom, ...
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/**
 * Field-name hints for what refinements check and a generator cannot see: timestamps
 * (`*_at`, `created_after`, `date_from`) and URLs.
 */
const isoDate = fc.date({ min: new Date("2000-01-01"), max: new Date("2099-12-31"), noInvalidDate: true }).map((d) => d.toISOString());
const HINTS: [RegExp, () => Arbitrary<unknown>][] = [
  [/(_at|_after|_before|^date_from|^date_to)$/, () => isoDate],
  [/(^url$|_url$)/, () => fc.webUrl()],
];

function objectFor(schema: z.ZodType, known: Known, depth: number): Arbitrary<Record<string, unknown>> {
  const shape = defOf(schema).shape ?? {};
  const entries: Record<string, Arbitrary<unknown>> = {};
  for (const [key, field] of Object.entries(shape)) {
    const generated = depth > 5 ? fc.constant(undefined) : valueFor(field, known, depth + 1);
    const hint = HINTS.find(([re]) => re.test(key))?.[1];
    const own =
      hint && inputDef(field).type === "string"
        ? fc.oneof({ weight: 4, arbitrary: hint() }, { weight: 1, arbitrary: generated })
        : generated;
    const real = known[key];
    entries[key] = real ? fc.oneof({ weight: 3, arbitrary: real() }, { weight: 1, arbitrary: own }) : own;
  }
  return fc.record(entries).map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));
}

/** Anything at all that JSON can carry, plus the numbers and keys that break parsers. */
export const chaosJson: Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  {
    weight: 1,
    arbitrary: fc.dictionary(fc.constantFrom("__proto__", "constructor", "prototype", "toString"), fc.jsonValue({ maxDepth: 2 })),
  },
  { weight: 1, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
);

/** Takes a mostly-valid object and breaks one field: wrong type, out of range, nasty string. */
export function mutated(base: Arbitrary<unknown>): Arbitrary<unknown> {
  return fc.tuple(base, fc.nat(), chaosJson).map(([value, pick, replacement]) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return replacement;
    const keys = Object.keys(value);
    if (keys.length === 0) return { [String(pick)]: replacement };
    const key = keys[pick % keys.length] as string;
    return { ...(value as Record<string, unknown>), [key]: replacement };
  });
}

/** A request body for a schema: mostly valid, one field broken, or chaos. */
export function bodyFor(schema: z.ZodType | undefined, known: Known): Arbitrary<unknown> {
  if (!schema) return fc.option(chaosJson, { nil: undefined });
  const valid = valueFor(schema, known);
  return fc.oneof({ weight: 4, arbitrary: valid }, { weight: 3, arbitrary: mutated(valid) }, { weight: 1, arbitrary: chaosJson });
}

/** Query-string pairs for a schema: known keys with generated or hostile values, plus strays. */
export function queryFor(schema: z.ZodType | undefined, known: Known): Arbitrary<Record<string, string | string[]>> {
  const hostile = fc.oneof(
    fc.string({ unit: "grapheme", maxLength: 20 }),
    fc.constantFrom("1e309", "18446744073709551616", "-1", "0x10", "9".repeat(400), " 5", "5.5", "", "null", "[]"),
    fc.constantFrom(...NASTY_STRINGS),
  );
  const shape = schema ? (defOf(schema).shape ?? {}) : {};
  const entries: Record<string, Arbitrary<string | string[] | undefined>> = {};
  for (const [key, field] of Object.entries(shape)) {
    const real = known[key];
    const own = valueFor(field, known).map((v) =>
      v === undefined || v === null ? undefined : typeof v === "string" ? v : JSON.stringify(v),
    );
    const options: Arbitrary<string | string[] | undefined>[] = [own, hostile, fc.array(hostile, { minLength: 2, maxLength: 3 })];
    if (real) options.push(real().map(String));
    entries[key] = fc.option(fc.oneof(...options), { nil: undefined, freq: 3 });
  }
  return fc
    .tuple(fc.record(entries), fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), hostile, { maxKeys: 2 }))
    .map(([own, stray]) => {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries({ ...stray, ...own })) if (v !== undefined) out[k] = v;
      return out;
    });
}

/** Path parameters: real ids, generated values and hostile segments. */
export function paramsFor(schema: z.ZodType | undefined, names: string[], known: Known): Arbitrary<Record<string, string>> {
  const shape = schema ? (defOf(schema).shape ?? {}) : {};
  const entries: Record<string, Arbitrary<string>> = {};
  for (const name of names) {
    const field = shape[name];
    const own = field ? valueFor(field, known).map((v) => (typeof v === "string" ? v : JSON.stringify(v ?? ""))) : fc.uuid();
    const hostile = fc.oneof(
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }),
      fc.constantFrom(...NASTY_STRINGS),
      fc.uuid(),
      fc.constantFrom(...RAW_SEGMENTS).map((s) => RAW + s),
    );
    const real = known[name];
    entries[name] = real
      ? fc.oneof({ weight: 2, arbitrary: real().map(String) }, { weight: 2, arbitrary: own }, { weight: 1, arbitrary: hostile })
      : fc.oneof({ weight: 2, arbitrary: own }, { weight: 1, arbitrary: hostile });
  }
  return fc.record(entries);
}

/** `:name` placeholders of an Express path, in order. */
export const pathParamNames = (path: string) => [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1] as string);

/** Marks a path segment to be sent exactly as written (already percent-encoded, or not). */
export const RAW = "\u0001raw:";
/** Segments that are invalid once decoded: bad percent-escapes, invalid UTF-8, dot segments. */
export const RAW_SEGMENTS = ["%ff", "%E0%A4%A", "%", "%zz", "%C3%28", "%ED%A0%80", "%00", "..", "%2e%2e", "%2F", "a%0Ab"];

/** Percent-encodes the UTF-8 bytes of a value (lone surrogates become U+FFFD). */
export function encodeSegment(value: string): string {
  if (value.startsWith(RAW)) return value.slice(RAW.length);
  let out = "";
  for (const byte of Buffer.from(value, "utf8")) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9._~-]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Fills an Express path's placeholders (each value URL-encoded as one segment). */
export function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/:([A-Za-z_]+)/g, (_, name: string) => encodeSegment(params[name] ?? "x"));
}

/** Draws one valid, storable value deterministically (for building fixtures from a schema). */
export function sampleValid<T>(schema: z.ZodType, known: Known, seed: number, tries = 200): T {
  const samples = fc.sample(valueFor(schema, known), { seed, numRuns: tries });
  for (const value of samples) {
    const parsed = schema.safeParse(value);
    if (parsed.success && findUnsafeInput(parsed.data).length === 0) return value as T;
  }
  throw new Error("could not generate a valid sample for the schema");
}
