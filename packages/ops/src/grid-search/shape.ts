// The grid's shape and point buffer; also the `@kernelkit/ops/grid-shape` entry, for workers that
// run the grid search and load nothing else of this package.
import type { GridDim, GridSearchProblem } from './types.js';

export const gridAxisCount = (g: GridDim): number => Math.floor((g.upper - g.lower) / g.step);

/** Value r of an axis: `lower + r·step` in f64, the one formula every backend's axis values follow. */
export const gridAxisValue = (g: GridDim, r: number): number => g.lower + r * g.step;

export function gridAxisValues(g: GridDim): Float64Array {
  const n = gridAxisCount(g);
  const a = new Float64Array(n);
  for (let r = 0; r < n; r++) a[r] = gridAxisValue(g, r);
  return a;
}

/**
 * The pruned search's interval bounds: lo/hi[j·m + i] = min/max over axes j … D−1 of Σ c_ik·x_k
 * (row D is zeros), each axis at its first and last value. For a grid with points (total > 0).
 */
export function gridSuffixBounds(p: GridSearchProblem): { readonly lo: Float64Array; readonly hi: Float64Array } {
  const { d, m, counts, dims, coefficients: c } = p;
  const lo = new Float64Array((d + 1) * m);
  const hi = new Float64Array((d + 1) * m);
  for (let i = 0; i < m; i++) {
    for (let j = d - 1; j >= 0; j--) {
      const a = c[i * d + j]! * gridAxisValue(dims[j]!, 0);
      const b = c[i * d + j]! * gridAxisValue(dims[j]!, counts[j]! - 1);
      lo[j * m + i] = lo[(j + 1) * m + i]! + Math.min(a, b);
      hi[j * m + i] = hi[(j + 1) * m + i]! + Math.max(a, b);
    }
  }
  return { lo, hi };
}

/**
 * The exact test, in the CS610 reference's evaluation order: Σ_j C_ij·x_j left to right, minus d_i, then
 * |·| ≤ e_i. Every backend's final answer for a point is this function's answer.
 */
export function gridPointPasses(p: GridSearchProblem, x: ArrayLike<number>): boolean {
  const { d, m, coefficients: c, targets, tolerances } = p;
  for (let i = 0; i < m; i++) {
    const row = i * d;
    let s = 0;
    for (let j = 0; j < d; j++) s += c[row + j]! * x[j]!;
    if (!(Math.abs(s - targets[i]!) <= tolerances[i]!)) return false;
  }
  return true;
}

/** Points growable buffer: append D values at a time, refusing past `maxPoints`. */
export class PointSink {
  private buf: Float64Array;
  count = 0;
  constructor(
    readonly dims: number,
    readonly maxPoints: number,
    initial = 1024,
  ) {
    this.buf = new Float64Array(Math.max(1, Math.min(initial, maxPoints)) * dims);
  }
  /** Makes room for `more` points beyond those held (within maxPoints) in one step, so a batch of known size grows the buffer at most once. */
  reserve(more: number): void {
    const want = Math.min(this.count + more, this.maxPoints) * this.dims;
    if (want <= this.buf.length) return;
    const grown = new Float64Array(Math.max(want, Math.min(this.buf.length * 2, this.maxPoints * this.dims)));
    grown.set(this.buf);
    this.buf = grown;
  }
  /** Returns false when the limit is reached (the caller turns that into a LimitExceededError). */
  push(x: ArrayLike<number>): boolean {
    if (this.count >= this.maxPoints) return false;
    const d = this.dims;
    if ((this.count + 1) * d > this.buf.length) this.reserve(1);
    const o = this.count * d;
    for (let j = 0; j < d; j++) this.buf[o + j] = x[j]!;
    this.count++;
    return true;
  }
  appendAll(points: Float64Array, count: number): boolean {
    for (let i = 0; i < count; i++) if (!this.push(points.subarray(i * this.dims, (i + 1) * this.dims))) return false;
    return true;
  }
  finish(): { count: number; dims: number; points: Float64Array } {
    return { count: this.count, dims: this.dims, points: this.buf.slice(0, this.count * this.dims) };
  }
}
