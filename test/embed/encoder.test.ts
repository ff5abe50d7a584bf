import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ENCODER_DIMENSIONS, ENCODER_MODEL, encoderEmbedder, encodeTexts } from "../../src/insights/embed/encoder.js";

/** Reference vectors the int8 graph gave in Python (models/prepare/prepare.py), for the same texts. */
const reference = JSON.parse(readFileSync(new URL("./fixtures/reference-vectors.json", import.meta.url), "utf8")) as {
  texts: string[];
  encoder: number[][];
};

const cos = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};

describe("encoder (all-MiniLM-L6-v2, int8 ONNX)", () => {
  it("gives the Python runtime's vectors for the same texts, alone or batched", async () => {
    const batched = await encodeTexts(reference.texts);
    const alone = await encodeTexts([reference.texts[3]!]);
    batched.forEach((v, i) => {
      expect(v).toHaveLength(ENCODER_DIMENSIONS);
      expect(cos(v, reference.encoder[i]!)).toBeGreaterThan(0.999);
    });
    // Dynamic int8 quantisation scales activations over the whole batch, so a text's vector moves a
    // little with the texts batched with it (docs/operations.md, "Embedding models").
    expect(cos(alone[0]!, batched[3]!)).toBeGreaterThan(0.98);
  });

  it("knows meaning: a paraphrase is nearer than a text sharing words", async () => {
    const [a, b, c] = await encodeTexts([
      "The app crashes whenever I upload a photo.",
      "Uploading a picture makes the application quit unexpectedly.",
      "I upload my photo to the app store listing.",
    ]);
    expect(cos(a!, b!)).toBeGreaterThan(cos(a!, c!));
  });

  it("serves the EmbeddingProvider interface: unit vectors in order, long texts cut, any visible text embedded", async () => {
    const embedder = encoderEmbedder();
    expect(embedder.model).toBe(ENCODER_MODEL);
    const vectors = await embedder.embed(["short", "word ".repeat(5000), "?!", "😀"]);
    expect(vectors).toHaveLength(4);
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 4);
    expect(await embedder.embed([])).toEqual([]);
  });
});
