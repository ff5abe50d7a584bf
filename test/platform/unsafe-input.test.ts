import { describe, expect, it } from "vitest";
import { findUnsafeInput, MAX_INPUT_DEPTH } from "../../src/platform/validation.js";

/**
 * `findUnsafeInput`: what PostgreSQL cannot store (NUL, unpaired surrogates) and what nests too deep,
 * each with the path to it, in document order (an object's keys, last first, before its values), at
 * most `limit` of them.
 */
describe("findUnsafeInput", () => {
  it("finds nothing in a clean batch", () => {
    const batch = {
      entity_id: "e",
      sources: Array.from({ length: 50 }, (_, i) => ({
        platform: "reddit",
        content: `text ${i} 日本語 😀`,
        engagement: { likes: i },
        published_at: new Date(0),
        comments: [{ text: "ok", metadata: { tags: ["a", "b"], nested: { deep: [1, null, true] } } }],
      })),
    };
    expect(findUnsafeInput(batch)).toEqual([]);
  });

  it("names each bad string and key by its path, keys before values, in document order", () => {
    const value = {
      "bad\u0000key": "fine",
      list: ["ok", "a\u0000b", { "x\ud800": 1, inner: "\udc00y" }],
      last: "\u0000",
      "\ud800": "z",
    };
    expect(findUnsafeInput(value)).toEqual([
      { path: ["\ud800"], kind: "surrogate" },
      { path: ["bad\u0000key"], kind: "nul" },
      { path: ["list", 1], kind: "nul" },
      { path: ["list", 2, "x\ud800"], kind: "surrogate" },
      { path: ["list", 2, "inner"], kind: "surrogate" },
      { path: ["last"], kind: "nul" },
    ]);
  });

  it("stops at the limit", () => {
    const value = Array.from({ length: 30 }, () => "\u0000");
    const found = findUnsafeInput(value, 3);
    expect(found.map((f) => f.path)).toEqual([[0], [1], [2]]);
    expect(findUnsafeInput(value)).toHaveLength(20);
  });

  it("reports a value nested deeper than the bound once, at the depth it stops, without walking further", () => {
    let deep: unknown = "\u0000";
    for (let i = 0; i < MAX_INPUT_DEPTH + 50; i++) deep = i % 2 === 0 ? [deep] : { k: deep };
    const found = findUnsafeInput({ field: deep });
    expect(found).toHaveLength(1);
    expect(found[0]?.kind).toBe("depth");
    expect(found[0]?.path).toHaveLength(MAX_INPUT_DEPTH);
    expect(found[0]?.path[0]).toBe("field");

    let shallow: unknown = "\u0000";
    for (let i = 0; i < MAX_INPUT_DEPTH - 2; i++) shallow = [shallow];
    expect(findUnsafeInput({ field: shallow })).toEqual([{ path: ["field", ...Array(MAX_INPUT_DEPTH - 2).fill(0)], kind: "nul" }]);
  });

  it("reads only plain objects and arrays", () => {
    class Holder {
      text = "\u0000";
    }
    expect(
      findUnsafeInput({ date: new Date(0), holder: new Holder(), plain: Object.assign(Object.create(null), { t: "\u0000" }) }),
    ).toEqual([{ path: ["plain", "t"], kind: "nul" }]);
  });
});
