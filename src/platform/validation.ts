import { z } from "zod";
import { ValidationFailed, type ValidationIssue } from "./errors.js";

export type InputLocation = "body" | "query" | "path" | "header";

type Issue = z.core.$ZodIssue & { input?: unknown };

const EXPECTED_INTEGER = "Input should be a valid integer";

/** True for a number schema that only takes integers (`z.int()`, `z.number().int()`). */
function isIntegerSchema(inst: unknown): boolean {
  const def = (inst as { _zod?: { def?: { format?: unknown; checks?: { _zod: { def: { check?: string; format?: unknown } } }[] } } })?._zod
    ?.def;
  const isInt = (format: unknown) => typeof format === "string" && format.includes("int");
  return isInt(def?.format) || (def?.checks ?? []).some((c) => c._zod.def.check === "number_format" && isInt(c._zod.def.format));
}

/**
 * zod reports a string sent for an integer field as "expected number", like any number
 * field; the schema that raised it still knows it takes integers only, so say so.
 */
const issueMessages: z.core.$ZodErrorMap = (issue) =>
  issue.code === "invalid_type" && issue.expected === "number" && isIntegerSchema(issue.inst) ? EXPECTED_INTEGER : undefined;

function describeIssue(issue: Issue, location: InputLocation): { msg: string; type: string } {
  switch (issue.code) {
    case "invalid_type": {
      const wholeBody = location === "body" && issue.path.length === 0;
      if (issue.input === undefined) return { msg: wholeBody ? "A JSON object body is required" : "Field required", type: "missing" };
      const expected = String(issue.expected);
      if (expected === "int" || issue.message === EXPECTED_INTEGER) return { msg: EXPECTED_INTEGER, type: "int_type" };
      if (expected === "object" || expected === "record") {
        return { msg: wholeBody ? "The request body should be a JSON object" : "Input should be a valid object", type: "model_type" };
      }
      if (expected === "array") return { msg: "Input should be a valid list", type: "list_type" };
      if (expected === "boolean") return { msg: "Input should be a valid boolean", type: "bool_type" };
      if (expected === "number") return { msg: "Input should be a valid number", type: "float_type" };
      if (expected === "string") return { msg: "Input should be a valid string", type: "string_type" };
      return { msg: `Input should be a valid ${expected}`, type: `${expected}_type` };
    }
    case "too_small": {
      const min = String(issue.minimum);
      if (issue.origin === "string")
        return { msg: `String should have at least ${min} character${min === "1" ? "" : "s"}`, type: "string_too_short" };
      if (issue.origin === "array" || issue.origin === "set")
        return { msg: `List should have at least ${min} item${min === "1" ? "" : "s"}`, type: "too_short" };
      return issue.inclusive === false
        ? { msg: `Input should be greater than ${min}`, type: "greater_than" }
        : { msg: `Input should be greater than or equal to ${min}`, type: "greater_than_equal" };
    }
    case "too_big": {
      const max = String(issue.maximum);
      if (issue.origin === "string")
        return { msg: `String should have at most ${max} character${max === "1" ? "" : "s"}`, type: "string_too_long" };
      if (issue.origin === "array" || issue.origin === "set")
        return { msg: `List should have at most ${max} item${max === "1" ? "" : "s"}`, type: "too_long" };
      return issue.inclusive === false
        ? { msg: `Input should be less than ${max}`, type: "less_than" }
        : { msg: `Input should be less than or equal to ${max}`, type: "less_than_equal" };
    }
    case "invalid_format": {
      const format = issue.format;
      if (format === "regex") return { msg: `String should match pattern '${issue.pattern ?? ""}'`, type: "string_pattern_mismatch" };
      if (format === "uuid" || format === "guid") return { msg: "Input should be a valid UUID", type: "uuid_parsing" };
      if (format === "url") return { msg: "Input should be a valid URL", type: "url_parsing" };
      if (format === "datetime") return { msg: "Input should be a valid ISO 8601 datetime", type: "datetime_parsing" };
      if (format === "date") return { msg: "Input should be a valid ISO 8601 date", type: "date_parsing" };
      return { msg: `Input should be a valid ${format}`, type: `${format}_parsing` };
    }
    case "invalid_value": {
      const allowed = issue.values.map((v) => `'${String(v)}'`);
      const list = allowed.length > 1 ? `${allowed.slice(0, -1).join(", ")} or ${allowed.at(-1)}` : allowed[0];
      return { msg: `Input should be ${list}`, type: allowed.length > 1 ? "enum" : "literal_error" };
    }
    case "invalid_union":
      return { msg: issue.message || "Input does not match any allowed shape", type: "union_error" };
    case "unrecognized_keys":
      return { msg: `Unknown field(s): ${issue.keys.join(", ")}`, type: "extra_forbidden" };
    case "custom": {
      const type = (issue.params as { type?: string } | undefined)?.type;
      return { msg: issue.message, type: type ?? "value_error" };
    }
    default:
      return { msg: issue.message, type: "value_error" };
  }
}

export function toValidationIssues(error: z.ZodError, location: InputLocation): ValidationIssue[] {
  return (error.issues as Issue[]).map((issue) => {
    const { msg, type } = describeIssue(issue, location);
    return { loc: [location, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))], msg, type };
  });
}

/**
 * Input the services cannot safely handle, found after schema validation:
 * - strings PostgreSQL cannot store: text and jsonb refuse U+0000, and jsonb refuses
 *   unpaired UTF-16 surrogates (JSON allows the escape "\\ud800"; Unicode text does not);
 * - values nested deeper than MAX_INPUT_DEPTH (free-form objects such as `metadata`):
 *   recursive code (canonical JSON, sanitising, PostgreSQL's own JSON parser) would
 *   exhaust its stack on them.
 * Each is a validation error, not a failed write. The walk recurses at most MAX_INPUT_DEPTH levels (it
 * stops at that depth), keeps the path to the current value in one array and copies it only for a
 * finding, so a clean batch of thousands of items allocates nothing here. Findings come in document
 * order, an object's keys (last first) before its values, and the walk stops after `limit` of them.
 */
export const MAX_INPUT_DEPTH = 100;

type UnsafeKind = "nul" | "surrogate" | "depth";

export function findUnsafeInput(value: unknown, limit = 20): { path: (string | number)[]; kind: UnsafeKind }[] {
  const found: { path: (string | number)[]; kind: UnsafeKind }[] = [];
  const path: (string | number)[] = [];
  const unsafeText = (text: string): UnsafeKind | null => (text.includes("\u0000") ? "nul" : text.isWellFormed() ? null : "surrogate");
  const visit = (current: unknown, depth: number): void => {
    if (typeof current === "string") {
      const kind = unsafeText(current);
      if (kind) found.push({ path: [...path], kind });
      return;
    }
    if (current === null || typeof current !== "object") return;
    if (depth >= MAX_INPUT_DEPTH) {
      found.push({ path: [...path], kind: "depth" });
      return;
    }
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length && found.length < limit; i++) {
        path.push(i);
        visit(current[i], depth + 1);
        path.pop();
      }
      return;
    }
    const proto = Object.getPrototypeOf(current);
    if (proto !== Object.prototype && proto !== null) return;
    const record = current as Record<string, unknown>;
    const keys = Object.keys(record);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      const kind = unsafeText(key);
      if (kind) found.push({ path: [...path, key], kind });
    }
    for (let i = 0; i < keys.length && found.length < limit; i++) {
      const key = keys[i] as string;
      path.push(key);
      visit(record[key], depth + 1);
      path.pop();
    }
  };
  visit(value, 0);
  return found.slice(0, limit);
}

const UNSAFE: Record<UnsafeKind, { msg: string; type: string }> = {
  nul: { msg: "String should not contain the NUL character (\\u0000)", type: "string_nul" },
  surrogate: { msg: "String should be well-formed Unicode (no unpaired surrogate)", type: "string_unicode" },
  depth: { msg: `Input should not nest deeper than ${MAX_INPUT_DEPTH} levels`, type: "too_deep" },
};

/** Parses input against a schema, throwing the spec's 422 shape with `loc` rooted at `location`. */
export function parseInput<S extends z.ZodType>(schema: S, data: unknown, location: InputLocation): z.output<S> {
  const result = schema.safeParse(data, { reportInput: true, error: issueMessages });
  if (!result.success) throw new ValidationFailed(toValidationIssues(result.error, location));
  const unsafe = findUnsafeInput(result.data);
  if (unsafe.length > 0) {
    throw new ValidationFailed(unsafe.map(({ path, kind }) => ({ loc: [location, ...path], ...UNSAFE[kind] })));
  }
  return result.data;
}

/**
 * Ids in request paths. A value an id parameter's schema refuses names no resource, so it
 * answers as an unknown id does: 404 `not_found` ("<resource> was not found."), never a
 * 422. `mountRoutes` applies the rule to every parameter declared here.
 */
export const pathIds = z.registry<{ resource: string }>();

/** A path parameter naming one `resource` (a uuid unless `schema` says otherwise). */
export function pathId(resource: string): z.ZodUUID;
export function pathId<S extends z.ZodType<string>>(resource: string, schema: S): S;
export function pathId(resource: string, schema: z.ZodType<string> = z.uuid()): z.ZodType<string> {
  return schema.register(pathIds, { resource });
}

/**
 * An optional request field that also accepts `null`, read as absent (the reference
 * server's behaviour that existing clients rely on).
 */
export function optional<S extends z.ZodType>(schema: S) {
  return schema.nullish().transform((v) => (v === null ? undefined : v) as Exclude<z.output<S>, null> | undefined);
}

/** Same as `optional`, but an absent or null value becomes `fallback`. */
export function withDefault<S extends z.ZodType>(schema: S, fallback: z.output<S>) {
  return schema.nullish().transform((v) => (v === null || v === undefined ? fallback : v) as z.output<S>);
}

/** Integers from query strings: digits only, so "1e3" and " 5" are rejected rather than coerced. */
export function queryInt(min: number, max: number) {
  return z
    .string()
    .transform((s, ctx) => {
      if (!/^-?\d{1,12}$/.test(s)) {
        ctx.addIssue({
          code: "custom",
          message: "Input should be a valid integer, unable to parse string as an integer",
          params: { type: "int_parsing" },
        });
        return z.NEVER;
      }
      return Number(s);
    })
    .pipe(z.number().int().min(min).max(max));
}
