/**
 * The two numerical pieces the feedback-kind model is trained with, shared by the shared model's training
 * (bench/quality/feedback/train.ts) and a tracker's fine-tuning (adapt.ts), so both step alike.
 */

/** Softmax of `z` in place (shifted by its largest score, so no exponent overflows). */
export function softmaxInPlace(z: Float64Array): void {
  let top = Number.NEGATIVE_INFINITY;
  for (const x of z) top = Math.max(top, x);
  let sum = 0;
  for (let k = 0; k < z.length; k++) {
    z[k] = Math.exp(z[k]! - top);
    sum += z[k]!;
  }
  for (let k = 0; k < z.length; k++) z[k]! /= sum;
}

/**
 * Adam's update for `size` parameters (Kingma & Ba, with the usual β1 0.9, β2 0.999, ε 1e-8): each call
 * `step(t, grad, apply)` for step t (from 1) calls `apply(i, delta)` with the amount to subtract from parameter i.
 */
export function adam(size: number, rate: number) {
  const [beta1, beta2, eps] = [0.9, 0.999, 1e-8];
  const m = new Float64Array(size);
  const v = new Float64Array(size);
  return (t: number, grad: Float64Array, apply: (i: number, delta: number) => void) => {
    const c1 = 1 - beta1 ** t;
    const c2 = 1 - beta2 ** t;
    for (let i = 0; i < size; i++) {
      const g = grad[i]!;
      m[i] = beta1 * m[i]! + (1 - beta1) * g;
      v[i] = beta2 * v[i]! + (1 - beta2) * g * g;
      apply(i, (rate * (m[i]! / c1)) / (Math.sqrt(v[i]! / c2) + eps));
    }
  };
}
