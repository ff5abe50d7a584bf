import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { cosine, HASHING_DIMENSIONS, hashingVector } from "../../src/insights/embed/hashing.js";

/**
 * The local hashing embedder's vectors are stored (content_store.embedding under `local-hashing-v1`), so a
 * change to how they are computed must not change them: the digest below is of the vectors the first
 * implementation (which built every feature name as a string) gave for these texts.
 */
const TEXTS = [
  "Sync keeps failing on my phone.",
  "Ten dollars a month is too expensive!",
  "?!",
  "🙂🙂 ok",
  "a",
  "Ünïcödé straße ǅ 𝒳yz",
  "日本語のテキスト",
  "",
  "x y",
  "The editor's dark-mode is great; v2.3.1 crashes on start-up.",
];

describe("hashing embedder", () => {
  it("gives the vectors of local-hashing-v1 as first stored, bit for bit", () => {
    const digest = createHash("sha256");
    for (const text of TEXTS) digest.update(JSON.stringify(hashingVector(text)));
    expect(digest.digest("hex")).toBe("f9dd6667f77b00ef4c4279ce43e861515388f3df2bba7a1ea8e30432ddfb06e7");
  });

  it("gives unit vectors (zeros for a text with no visible character) in which shared words land close", () => {
    for (const text of TEXTS) {
      const v = hashingVector(text);
      expect(v).toHaveLength(HASHING_DIMENSIONS);
      const norm = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
      if (text.trim() === "") expect(norm).toBe(0);
      else expect(norm).toBeCloseTo(1, 4);
    }
    const sync = hashingVector("Sync keeps failing on my phone.");
    expect(cosine(sync, hashingVector("sync is failing on the phone"))).toBeGreaterThan(cosine(sync, hashingVector("Great editor")));
  });
});
