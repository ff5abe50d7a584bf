import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENCODER_DIMENSIONS, ENCODER_MODEL } from "../../src/insights/embed/encoder.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
let bearer: string;
beforeAll(async () => {
  h = await createHarness();
  bearer = `Bearer ${await h.token()}`;
});
afterAll(() => h.close());

const embed = (text: unknown, auth = bearer) => h.http.post("/agent/v1/content/embed").set("Authorization", auth).send({ text });
const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

async function createKey(scopes: string[]): Promise<string> {
  const res = await h.http.post("/api/user/keys").set("Authorization", bearer).send({ name: "embed test", scopes });
  expect(res.status).toBe(201);
  return res.body.raw_key as string;
}

describe("POST /agent/v1/content/embed with the local encoder", () => {
  it("answers {embedding, model, dimensions} with a unit vector of the stated length", async () => {
    const res = await embed("Customers keep asking for a cheaper starter plan.");
    expect(res.status).toBe(200);
    expect(res.body.model).toBe(ENCODER_MODEL);
    expect(res.body.dimensions).toBe(ENCODER_DIMENSIONS);
    expect(res.body.embedding).toHaveLength(res.body.dimensions);
    expect(res.body.embedding.every((x: unknown) => typeof x === "number" && Number.isFinite(x))).toBe(true);
    expect(norm(res.body.embedding)).toBeCloseTo(1, 4);
  });

  it("is deterministic: the same text gives the same vector, a different text a different one", async () => {
    const [a, b, c] = await Promise.all([embed("pricing feedback"), embed("pricing feedback"), embed("onboarding friction")]);
    expect(a.body.embedding).toEqual(b.body.embedding);
    expect(a.body.embedding).not.toEqual(c.body.embedding);
  });

  it("embeds by meaning: a paraphrase with no word in common is nearer than an unrelated text", async () => {
    const [a, b, c] = await Promise.all([
      embed("The subscription costs too much."),
      embed("This plan is overpriced."),
      embed("The export button is hidden in settings."),
    ]);
    const dot = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * y[i]!, 0);
    expect(dot(a.body.embedding, b.body.embedding)).toBeGreaterThan(dot(a.body.embedding, c.body.embedding) + 0.2);
  });

  it("gives text without letters or digits a unit vector too", async () => {
    const res = await embed("?!");
    expect(res.status).toBe(200);
    expect(norm(res.body.embedding)).toBeCloseTo(1, 4);
  });

  it("accepts exactly 32,000 characters and refuses 32,001, empty, blank and non-string text with the 422 shape", async () => {
    expect((await embed("a".repeat(32_000))).status).toBe(200);
    for (const [text, type] of [
      ["a".repeat(32_001), "string_too_long"],
      ["", "string_too_short"],
      ["   \n\t", "value_error"],
      [42, "string_type"],
      [undefined, "missing"],
    ] as const) {
      const res = await embed(text);
      expect(res.status, JSON.stringify(text)?.slice(0, 20)).toBe(422);
      expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["body", "text"], type, msg: expect.any(String) })]);
    }
  });

  it("takes a bearer or an API key with ingest or * scope; refuses missing credentials and export-only keys", async () => {
    expect((await embed("x", `Bearer ${await createKey(["ingest"])}`)).status).toBe(200);
    expect((await embed("x", `Bearer ${await createKey(["*"])}`)).status).toBe(200);
    const exportOnly = await embed("x", `Bearer ${await createKey(["export"])}`);
    expect(exportOnly.status).toBe(403);
    expect(exportOnly.body.code).toBe("insufficient_scope");
    const none = await h.http.post("/agent/v1/content/embed").send({ text: "x" });
    expect(none.status).toBe(401);
  });
});
