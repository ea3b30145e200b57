import { describe, expect, it } from 'vitest';
import type { GridSearchProblem } from '@kernelkit/ops';
import { decodePoint, nomineePoints } from '../src/ops/grid-search.js';

/** A problem with these axis lengths; axis j's values are j·1000 + position, so a decoded point names its positions. */
function gridOf(counts: number[]): GridSearchProblem {
  const axes = counts.map((n, j) => Float64Array.from({ length: n }, (_, i) => j * 1000 + i));
  return { d: counts.length, counts, axes, total: counts.reduce((a, b) => a * b, 1) } as unknown as GridSearchProblem;
}

/** Positions of point `index` by BigInt arithmetic, the last axis fastest. */
function positions(counts: number[], index: bigint): number[] {
  const at: number[] = [];
  for (let j = counts.length - 1; j >= 0; j--) {
    at[j] = Number(index % BigInt(counts[j]!));
    index /= BigInt(counts[j]!);
  }
  return at;
}

describe('grid search nominees', () => {
  it('orders (prefix, offset) pairs as the grid does, whatever order the kernel recorded them in', () => {
    const inner = 2 ** 24;
    const pairs: [number, number][] = [];
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let i = 0; i < 5000; i++) pairs.push([rand(8200), rand(inner)]);
    pairs.push([8199, inner - 1], [0, 0], [3, 5], [3, 4]);
    const recs = new Uint32Array(pairs.flat());
    const expected = [...pairs].sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([pre, off]) => pre * inner + off);
    expect(Array.from(nomineePoints(recs, pairs.length, inner))).toEqual(expected);
  });

  it('decodes indices exactly, past 2^31 and up to 2^53', () => {
    const cases: [number[], bigint][] = [
      [[13, 13, 13, 13, 13, 13, 13, 13, 13, 13], 123456789012n],
      [[13, 13, 13, 13, 13, 13, 13, 13, 13, 13], 13n ** 10n - 1n],
      [[8, 8, 8, 8, 8, 8, 8, 8, 8, 8], 2n ** 30n - 1n],
      [[3, 7, 5], 0n],
      [[4, 1000, 1000, 1000], 3_000_000_123n],
      // Grids of almost 2^53 points: the f64 steps before the int32 ones.
      [[4096, 4096, 4096, 4096, 31], 4096n ** 4n * 31n - 1n],
      [[4096, 4096, 4096, 4096, 31], 4096n ** 4n * 31n - 4097n],
      [[4095, 4093, 4091, 4089, 32], 4095n * 4093n * 4091n * 4089n * 32n - 33n],
      [[4095, 4093, 4091, 4089, 32], 4095n * 4093n * 4091n * 4089n * 32n - 1n],
    ];
    for (const [counts, index] of cases) {
      const p = gridOf(counts);
      const x = new Float64Array(counts.length);
      const at = positions(counts, index);
      expect(index < 2n ** 53n).toBe(true);
      decodePoint(p, Number(index), x);
      expect(Array.from(x)).toEqual(at.map((i, j) => j * 1000 + i));
    }
  });
});
