/**
 * Seeded PRNG (mulberry32) so workloads and tests are reproducible from a number alone.
 * Not cryptographic; chosen for speed and a 2^32 period, plenty for test data.
 */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** Uniform 32-bit unsigned integer. */
  nextU32(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296;
  }
  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }
  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
}

export function randomF32(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  const rng = new Rng(seed);
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = rng.uniform(lo, hi);
  return a;
}

export function randomF64(n: number, seed: number, lo = -1, hi = 1): Float64Array {
  const rng = new Rng(seed);
  const a = new Float64Array(n);
  for (let i = 0; i < n; i++) a[i] = rng.uniform(lo, hi);
  return a;
}

export function randomU32(n: number, seed: number): Uint32Array {
  const rng = new Rng(seed);
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = rng.nextU32();
  return a;
}

export function randomI32(n: number, seed: number): Int32Array {
  const rng = new Rng(seed);
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = rng.nextU32() | 0;
  return a;
}
