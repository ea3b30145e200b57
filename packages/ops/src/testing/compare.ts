import { allowedError, U32F, type Tolerance } from './tolerance.js';

const F32_MAX = 3.4028234663852886e38;

export interface Mismatch {
  readonly index: number;
  readonly got: number;
  readonly want: number;
  readonly allowed: number;
  readonly message: string;
}

/**
 * Compares against the f64 reference under a tolerance. NaN must meet NaN and ±Inf must meet
 * the same infinity (IEEE propagation); everything else must be within the bound.
 */
export function compareFloat(got: ArrayLike<number>, want: ArrayLike<number>, mag: ArrayLike<number>, tol: Tolerance): Mismatch | undefined {
  if (got.length !== want.length) {
    return { index: -1, got: got.length, want: want.length, allowed: 0, message: `length ${got.length}, expected ${want.length}` };
  }
  for (let i = 0; i < want.length; i++) {
    const g = got[i]!;
    const w = want[i]!;
    if (Number.isNaN(w) || !Number.isFinite(w) || !Number.isFinite(mag[i]!)) {
      // Once an Inf or NaN is involved the bound is meaningless; demand the IEEE outcome.
      const ok = Number.isNaN(w) ? Number.isNaN(g) : !Number.isFinite(w) ? g === w : Number.isNaN(g) || !Number.isFinite(g) || Math.abs(g - w) <= Math.abs(w);
      if (!ok) return { index: i, got: g, want: w, allowed: 0, message: `[${i}] got ${g}, expected ${w}` };
      continue;
    }
    const allowed = allowedError(tol, mag[i]!);
    // An f32 result may legitimately overflow where the f64 reference does not.
    if (!Number.isFinite(g) && !Number.isNaN(g) && tol.u === U32F && Math.abs(w) + allowed >= F32_MAX && Math.sign(g) === Math.sign(w)) continue;
    if (!(Math.abs(g - w) <= allowed)) {
      return { index: i, got: g, want: w, allowed, message: `[${i}] got ${g}, expected ${w} ± ${allowed.toExponential(3)} (${tol.statement})` };
    }
  }
  return undefined;
}

/** Bit-exact comparison for integer results. */
export function compareExact(got: ArrayLike<number>, want: ArrayLike<number>): Mismatch | undefined {
  if (got.length !== want.length) {
    return { index: -1, got: got.length, want: want.length, allowed: 0, message: `length ${got.length}, expected ${want.length}` };
  }
  for (let i = 0; i < want.length; i++) {
    if (!Object.is(got[i], want[i])) return { index: i, got: got[i]!, want: want[i]!, allowed: 0, message: `[${i}] got ${got[i]}, expected ${want[i]} (bit-exact)` };
  }
  return undefined;
}
