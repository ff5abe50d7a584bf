import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { STATIC_DIMENSIONS, STATIC_MODEL, staticEmbedder, staticEmbeddingProvider } from "../../src/insights/embed/static.js";

/** Reference vectors written by models/prepare/prepare.py from the same float16 rows. */
const reference = JSON.parse(readFileSync(new URL("./fixtures/reference-vectors.json", import.meta.url), "utf8")) as {
  texts: string[];
  static: number[][];
};

const cos = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};

describe("static companion", () => {
  const st = staticEmbedder();

  it("is loaded once per process and names its model", () => {
    expect(staticEmbedder()).toBe(st);
    expect(st.model).toBe(STATIC_MODEL);
    expect(st.dimensions).toBe(STATIC_DIMENSIONS);
  });

  it("gives the reference vectors of the Python side", () => {
    const vectors = st.embedSync(reference.texts);
    vectors.forEach((v, i) => {
      expect(cos(v, reference.static[i]!)).toBeGreaterThan(0.999);
    });
  });

  it("gives unit vectors, zeros for a text with no known token, and ranks by meaning", () => {
    const [a, b, c, empty] = st.embedSync([
      "The app keeps crashing when I upload a photo.",
      "Uploading pictures makes the application crash.",
      "Their pricing page is clear and the plans are cheap.",
      "",
    ]);
    expect(Math.hypot(...a!)).toBeCloseTo(1, 5);
    expect(Array.from(empty!).every((x) => x === 0)).toBe(true);
    expect(cos(a!, b!)).toBeGreaterThan(cos(a!, c!) + 0.1);
  });

  it("serves the EmbeddingProvider interface with plain arrays", async () => {
    const provider = staticEmbeddingProvider();
    const [v] = await provider.embed(["pricing feedback"]);
    expect(provider.model).toBe(STATIC_MODEL);
    expect(v).toHaveLength(provider.dimensions);
  });
});
