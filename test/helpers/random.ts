/**
 * A small deterministic generator for randomised tests (a linear congruential one), so a failing
 * corpus can be replayed from its seed.
 */
export function seeded(seed: number) {
  let state = seed;
  const rand = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  return { rand, pick };
}
