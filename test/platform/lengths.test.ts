import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { normalisePath } from "../../src/insights/context/paths.js";
import { bound } from "../../src/intake/collection/collectors/types.js";
import { MAX_UTTERANCE_CHARS, utteranceComments } from "../../src/intake/notes/mapping.js";
import type { Note } from "../../src/intake/notes/provider.js";
import { clipCodePoints, codePointLength, isInvisible, splitCodePoints } from "../../src/platform/text.js";
import { allRoutes } from "../../src/routes.js";
import { CompanyInput } from "../../src/workflows/onboarding/schemas.js";
import { RunHeaders } from "../../src/workflows/runs/schemas.js";
import { signIn, type TestUser } from "../context/helpers.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * Every length bound counts Unicode code points: an emoji is one character wherever a
 * bound applies (schema checks, path segments, serialised JSON, clipping of upstream text).
 */
let h: Harness;
let user: TestUser;

beforeAll(async () => {
  h = await createHarness();
  user = await signIn(h);
});
afterAll(() => h.close());

const EMOJI = "😀"; // one code point, two UTF-16 units
const emoji = (n: number) => EMOJI.repeat(n);

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  options?: z.ZodType[];
  checks?: { _zod: { def: { check: string; minimum?: number; maximum?: number; format?: string } } }[];
}
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Every string schema with a length bound inside a request schema, with where it sits. */
function boundedStrings(schema: z.ZodType, path: string): { path: string; schema: z.ZodType; min: number; max: number | undefined }[] {
  const def = defOf(schema);
  switch (def.type) {
    case "object":
      return Object.entries(def.shape ?? {}).flatMap(([k, v]) => boundedStrings(v, `${path}.${k}`));
    case "array":
      return boundedStrings(def.element as z.ZodType, `${path}[]`);
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "nonoptional":
    case "catch":
      return boundedStrings(def.innerType as z.ZodType, path);
    case "pipe":
      return boundedStrings(def.in as z.ZodType, path);
    case "union":
      return (def.options ?? []).flatMap((o, i) => boundedStrings(o, `${path}|${i}`));
    case "string": {
      const checks = (def.checks ?? []).map((c) => c._zod.def);
      if (checks.some((c) => c.check === "string_format")) return [];
      const min = Math.max(0, ...checks.filter((c) => c.check === "min_length").map((c) => c.minimum ?? 0));
      const maxes = checks.filter((c) => c.check === "max_length").map((c) => c.maximum ?? Number.POSITIVE_INFINITY);
      const max = maxes.length > 0 ? Math.min(...maxes) : undefined;
      return min > 0 || max !== undefined ? [{ path, schema, min, max }] : [];
    }
    default:
      return [];
  }
}

const lengthIssues = (schema: z.ZodType, value: string) => {
  const result = schema.safeParse(value);
  return result.success ? [] : result.error.issues.filter((i) => i.code === "too_big" || i.code === "too_small").map((i) => i.code);
};

describe("string bounds in every route's schemas", () => {
  it("count code points: max emoji fit, one more is too long; min emoji suffice, one fewer is too short", () => {
    const schemas = allRoutes(h.deps).flatMap((r) =>
      (["body", "query", "params"] as const).flatMap((part) => (r[part] ? [[`${r.method} ${r.path} ${part}`, r[part]] as const] : [])),
    );
    const found = [...schemas, ["Idempotency-Key header", RunHeaders] as const].flatMap(([where, schema]) => boundedStrings(schema, where));
    expect(found.length).toBeGreaterThan(50);
    for (const { path, schema, min, max } of found) {
      if (max !== undefined) {
        // Cheap enough for the largest bounds (500 000 code points).
        expect(lengthIssues(schema, emoji(max)), `${path} at ${max}`).toEqual([]);
        expect(lengthIssues(schema, emoji(max + 1)), `${path} at ${max + 1}`).toEqual(["too_big"]);
      }
      if (min > 1) {
        expect(lengthIssues(schema, emoji(min)), `${path} at ${min}`).toEqual([]);
        expect(lengthIssues(schema, emoji(min - 1)), `${path} at ${min - 1}`).toEqual(["too_small"]);
      }
    }
  });
});

describe("bounds checked in code", () => {
  it("context paths: segments of 200 and paths of 512 code points", async () => {
    expect(normalisePath(emoji(200))).toEqual({ ok: true, path: emoji(200) });
    expect(normalisePath(emoji(201)).ok).toBe(false);
    const long = [emoji(200), emoji(200), emoji(110)].join("/"); // 512 code points
    expect(normalisePath(long)).toEqual({ ok: true, path: long });
    expect(normalisePath(`${long}x`).ok).toBe(false);

    const saved = await user.save({ title: "Emoji path", content: "x", path: `notes/${emoji(200)}` });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body.path).toBe(`notes/${emoji(200)}`);
    const refused = await user.save({ title: "Emoji path", content: "x", path: `notes/${emoji(201)}` });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([expect.objectContaining({ loc: ["body", "path"], msg: expect.stringContaining("200") })]);
  });

  it("onboarding collection_targets: 20 000 code points of JSON", () => {
    const targets = (n: number) => ({ a: emoji(n - '{"a":""}'.length) });
    expect(CompanyInput.safeParse({ name: "Acme", collection_targets: targets(20_000) }).success).toBe(true);
    expect(CompanyInput.safeParse({ name: "Acme", collection_targets: targets(20_001) }).success).toBe(false);
  });

  it("upstream text is clipped and split at code points, never inside a character", () => {
    expect(clipCodePoints(emoji(3), 2)).toBe(emoji(2));
    expect(clipCodePoints(`a${emoji(3)}`, 2)).toBe(`a${EMOJI}`);
    expect(splitCodePoints(`${emoji(3)}ab`, 2)).toEqual([emoji(2), `${EMOJI}a`, "b"]);
    expect(codePointLength(`a${emoji(2)}\ud800`)).toBe(4);
    expect(bound.author(emoji(600))).toBe(emoji(500));
    expect(bound.url(`https://example.com/${emoji(4980)}`)).toBe(`https://example.com/${emoji(4980)}`);

    const text = emoji(MAX_UTTERANCE_CHARS + 1);
    const note = {
      id: "not_1234567890abcd",
      created_at: "2026-01-02T03:04:05Z",
      transcript: [{ speaker: { source: "microphone" }, text }],
    } as unknown as Note;
    const parts = utteranceComments(note);
    expect(parts.map((p) => codePointLength(p.text))).toEqual([MAX_UTTERANCE_CHARS, 1]);
    expect(parts.map((p) => p.text).join("")).toBe(text);
  });
});

describe("context paths of invisible characters", () => {
  it.each([
    ["\u200b", "zero-width space"],
    ["\u202e", "right-to-left override"],
    ["\u200b\u200c\u200d\u2060\ufeff", "zero-width characters"],
    ["\u2066\u2069\u061c", "bidirectional isolates"],
    ["\u3164\ufe0f", "filler and variation selector"],
    ["\u00a0\u2003", "non-breaking and em spaces"],
    ["/\u200b/\u202e/", "invisible segments"],
  ])("refuses %j (%s) like an empty path", async (path) => {
    expect(isInvisible(path.replaceAll("/", ""))).toBe(true);
    const res = await user.save({ title: "Invisible", content: "x", path });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([{ loc: ["body", "path"], msg: expect.stringContaining("at least one segment"), type: "value_error" }]);
  });

  it("drops an invisible segment like an empty one, and keeps visible ones", async () => {
    const res = await user.save({ title: "Invisible", content: "x", path: "notes/\u200b/a" });
    expect(res.status).toBe(200);
    expect(res.body.path).toBe("notes/a");
    expect(isInvisible("a\u200b")).toBe(false);
  });
});
