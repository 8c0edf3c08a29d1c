// Seeded randomness for the suites: every random choice comes from one seed, printed at the start of a run, so
// RELIABILITY_SEED=<seed> replays the same plan (the same tasks, answers, cancels and kill delays).

/** The suite's seed: RELIABILITY_SEED when set, else a fresh one. */
export function suiteSeed(): number {
  const given = process.env.RELIABILITY_SEED;
  if (given !== undefined && given !== "") {
    const seed = Number(given);
    if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`RELIABILITY_SEED must be an integer, got ${given}`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 32);
}

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
}

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function seeded(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
  };
}
