import type { ScanProblem } from './types.js';

/**
 * Integers: exact wrapped sums (returned in a Float64Array, all values < 2^32 in magnitude).
 * Floats: f64 sums. `abs: true` gives the prefix sums of |x| used to scale float tolerances.
 */
export function scanReference(p: ScanProblem, abs = false): Float64Array {
  const n = p.input.length;
  const out = new Float64Array(n);
  const a = p.input;
  if (p.dtype === 'u32' || p.dtype === 'i32') {
    const wrap = p.dtype === 'u32' ? (v: number) => v >>> 0 : (v: number) => v | 0;
    let acc = wrap(p.initial);
    for (let i = 0; i < n; i++) {
      if (p.exclusive) {
        out[i] = acc;
        acc = wrap(acc + a[i]!);
      } else {
        acc = wrap(acc + a[i]!);
        out[i] = acc;
      }
    }
    return out;
  }
  let acc = abs ? Math.abs(p.initial) : p.initial;
  for (let i = 0; i < n; i++) {
    const v = abs ? Math.abs(a[i]!) : a[i]!;
    if (p.exclusive) {
      out[i] = acc;
      acc += v;
    } else {
      acc += v;
      out[i] = acc;
    }
  }
  return out;
}
