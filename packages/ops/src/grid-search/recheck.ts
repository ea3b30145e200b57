import type { PointSink } from './shape.js';
import type { GridSearchProblem } from './types.js';

/**
 * The exact f64 re-check of a screen's nominees, given as grid point indices (lexicographic, the
 * last axis fastest): each index decoded to its point, tested as `gridPointPasses` tests it (same
 * sums in the same order, so the same answer), and the passing points appended to a sink. The
 * problem's arrays are read into flat locals once, and constraint rows are summed two at a time
 * (each row's sum still left to right), so the host's share of a GPU search stays small beside its
 * kernel: nominees that pass run every row, and one dependent chain of adds per row left the core
 * mostly waiting.
 */
export class GridRecheck {
  private readonly d: number;
  private readonly m: number;
  private readonly counts: Int32Array;
  /** Axis j's values start at axisStart[j] in `values`. */
  private readonly axisStart: Int32Array;
  private readonly values: Float64Array;
  private readonly c: Float64Array;
  private readonly targets: Float64Array;
  private readonly tolerances: Float64Array;
  private readonly x: Float64Array;

  constructor(p: GridSearchProblem) {
    this.d = p.d;
    this.m = p.m;
    this.counts = Int32Array.from(p.counts);
    this.axisStart = new Int32Array(p.d);
    this.values = new Float64Array(p.counts.reduce((a, b) => a + b, 0));
    let o = 0;
    p.axes.forEach((axis, j) => {
      this.axisStart[j] = o;
      this.values.set(axis, o);
      o += axis.length;
    });
    this.c = Float64Array.from(p.coefficients);
    this.targets = Float64Array.from(p.targets);
    this.tolerances = Float64Array.from(p.tolerances);
    this.x = new Float64Array(p.d);
  }

  /** The coordinates of grid point `index` into `x`. */
  decode(index: number, x: Float64Array): void {
    const { counts, axisStart, values } = this;
    let j = this.d - 1;
    for (; j >= 0 && index > 0x7fffffff; j--) {
      const n = counts[j]!;
      const at = index % n;
      x[j] = values[axisStart[j]! + at]!;
      index = (index - at) / n;
    }
    // The rest in int32 arithmetic, several times faster than f64 remainders.
    for (let i = index | 0; j >= 0; j--) {
      const n = counts[j]!;
      const q = (i / n) | 0;
      x[j] = values[axisStart[j]! + i - q * n]!;
      i = q;
    }
  }

  /** Whether point `x` passes: `gridPointPasses`' test. */
  passes(x: Float64Array): boolean {
    const { d, m, c, targets, tolerances } = this;
    let i = 0;
    for (; i + 1 < m; i += 2) {
      const r0 = i * d;
      const r1 = r0 + d;
      let s0 = 0;
      let s1 = 0;
      for (let j = 0; j < d; j++) {
        const v = x[j]!;
        s0 += c[r0 + j]! * v;
        s1 += c[r1 + j]! * v;
      }
      if (!(Math.abs(s0 - targets[i]!) <= tolerances[i]!) || !(Math.abs(s1 - targets[i + 1]!) <= tolerances[i + 1]!)) return false;
    }
    if (i < m) {
      const r0 = i * d;
      let s0 = 0;
      for (let j = 0; j < d; j++) s0 += c[r0 + j]! * x[j]!;
      if (!(Math.abs(s0 - targets[i]!) <= tolerances[i]!)) return false;
    }
    return true;
  }

  /** Re-checks `indices[0 … count)` in order into `sink`: false once the sink refuses a point (maxPoints). */
  pushPassing(indices: Float64Array, count: number, sink: PointSink): boolean {
    const x = this.x;
    // Nominees mostly pass: room for all of them at once, not a doubling per few thousand.
    sink.reserve(count);
    for (let k = 0; k < count; k++) {
      this.decode(indices[k]!, x);
      if (this.passes(x) && !sink.push(x)) return false;
    }
    return true;
  }
}
