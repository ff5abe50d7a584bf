import { describe, expect, it } from "vitest";
import { adam, softmaxInPlace } from "../../src/insights/enrichment/feedback-kind/optimise.js";

/** The feedback-kind model's training pieces (feedback-kind/optimise.ts), shared by its training and a tracker's fine-tuning. */
describe("the kind model's optimiser", () => {
  it("turns scores into probabilities that sum to 1, keep their order and do not overflow", () => {
    const z = Float64Array.from([1000, 999, -1000, 1001]);
    softmaxInPlace(z);
    expect(z.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect([...z].every(Number.isFinite)).toBe(true);
    expect(z[3]).toBeGreaterThan(z[0]!);
    expect(z[0]).toBeGreaterThan(z[1]!);
    expect(z[2]).toBe(0);
    // Equal scores share alike; a shift of every score changes nothing.
    const even = Float64Array.from([5, 5]);
    softmaxInPlace(even);
    expect([...even]).toEqual([0.5, 0.5]);
    const shifted = Float64Array.from([1, 2, 3].map((x) => x + 40));
    const plain = Float64Array.from([1, 2, 3]);
    softmaxInPlace(shifted);
    softmaxInPlace(plain);
    for (let k = 0; k < 3; k++) expect(shifted[k]).toBeCloseTo(plain[k]!, 12);
  });

  it("steps each parameter against its own gradient and reaches a quadratic's minimum", () => {
    const x = Float64Array.from([0, 10]);
    const target = [3, -2];
    const step = adam(2, 0.1);
    const grad = new Float64Array(2);
    for (let t = 1; t <= 500; t++) {
      for (let i = 0; i < 2; i++) grad[i] = 2 * (x[i]! - target[i]!);
      step(t, grad, (i, delta) => {
        x[i]! -= delta;
      });
    }
    expect(x[0]).toBeCloseTo(3, 2);
    expect(x[1]).toBeCloseTo(-2, 2);
    // The first step moves each parameter by about the rate, in the direction against its gradient.
    const first: number[] = [];
    adam(2, 0.1)(1, Float64Array.from([4, -0.5]), (i, delta) => {
      first[i] = delta;
    });
    expect(first[0]).toBeCloseTo(0.1, 6);
    expect(first[1]).toBeCloseTo(-0.1, 6);
  });
});
