import { assertIndices, type SampledValue } from '../common/sample.js';
import { allowedError, scanTolerance } from '../testing/tolerance.js';
import type { ScanProblem } from './types.js';

/**
 * scanReference at single outputs. One pass up to the largest index, in the reference's order;
 * integers exact (bound 0), floats under the scan tolerance.
 */
export function scanSample(p: ScanProblem, indices: readonly number[]): SampledValue[] {
  const n = p.input.length;
  assertIndices(indices, n);
  const a = p.input;
  const last = indices.reduce((m, i) => Math.max(m, i), -1);
  const want = new Set(indices);
  const found = new Map<number, SampledValue>();
  if (p.dtype === 'u32' || p.dtype === 'i32') {
    const wrap = p.dtype === 'u32' ? (v: number) => v >>> 0 : (v: number) => v | 0;
    let acc = wrap(p.initial);
    for (let i = 0; i <= last; i++) {
      const before = acc;
      acc = wrap(acc + a[i]!);
      if (want.has(i)) found.set(i, { index: i, value: p.exclusive ? before : acc, bound: 0 });
    }
  } else {
    const tol = scanTolerance(n, p.dtype);
    let acc = p.initial;
    let mag = Math.abs(p.initial);
    for (let i = 0; i <= last; i++) {
      const before = acc;
      const magBefore = mag;
      acc += a[i]!;
      mag += Math.abs(a[i]!);
      if (want.has(i)) found.set(i, p.exclusive ? { index: i, value: before, bound: allowedError(tol, magBefore) } : { index: i, value: acc, bound: allowedError(tol, mag) });
    }
  }
  return indices.map((i) => found.get(i)!);
}
