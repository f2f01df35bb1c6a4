import { randomInt } from 'node:crypto';

/**
 * A small seeded generator (mulberry32): the same seed gives the same sequence, so a fuzz
 * run that found something replays exactly with FUZZ_SEED.
 */
export class Prng {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, below). */
  int(below: number): number {
    return Math.floor(this.next() * below);
  }

  /** True with that probability. */
  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)];
  }
}

// The seed of `npm test`: every run sends the same requests, so a red run is never luck.
const DEFAULT_SEED = 20261124;

/**
 * The seed of this run: FUZZ_SEED when set (to replay a run), `FUZZ_SEED=random` for a new
 * one (to explore), else the fixed default.
 */
export function fuzzSeed(env: NodeJS.ProcessEnv = process.env): number {
  const given = env['FUZZ_SEED'];
  if (given === undefined || given === '') return DEFAULT_SEED;
  if (given === 'random') return randomInt(2 ** 31);
  const seed = Number(given);
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32)
    throw new Error(`FUZZ_SEED must be an integer from 0 to 2^32-1 or "random", not ${given}`);
  return seed;
}
