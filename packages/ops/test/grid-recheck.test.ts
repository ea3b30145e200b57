import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { GridRecheck, gridPointPasses, PointSink, type GridSearchProblem } from '../src/index.js';

/** A problem with these axis lengths; axis j's values are j·1000 + position, so a decoded point names its positions. */
function gridOf(counts: number[], m = 0, coefficients: number[] = [], targets: number[] = [], tolerances: number[] = []): GridSearchProblem {
  const axes = counts.map((n, j) => Float64Array.from({ length: n }, (_, i) => j * 1000 + i));
  return { d: counts.length, m, counts, axes, total: counts.reduce((a, b) => a * b, 1), coefficients, targets, tolerances, maxPoints: 1e7 } as unknown as GridSearchProblem;
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

describe('GridRecheck', () => {
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
      const x = new Float64Array(counts.length);
      expect(index < 2n ** 53n).toBe(true);
      new GridRecheck(gridOf(counts)).decode(Number(index), x);
      expect(Array.from(x)).toEqual(positions(counts, index).map((i, j) => j * 1000 + i));
    }
  });

  it("answers as gridPointPasses does, for odd and even constraint counts, on points near the tolerance", () => {
    const problem = fc.integer({ min: 1, max: 5 }).chain((d) =>
      fc.integer({ min: 0, max: 7 }).chain((m) =>
        fc.record({
          d: fc.constant(d),
          m: fc.constant(m),
          coefficients: fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: m * d, maxLength: m * d }),
          x: fc.array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: d, maxLength: d }),
          slack: fc.array(fc.double({ min: -1e-12, max: 1e-12, noNaN: true }), { minLength: m, maxLength: m }),
        }),
      ),
    );
    fc.assert(
      fc.property(problem, ({ d, m, coefficients, x, slack }) => {
        // Targets at the row sums and tolerances within rounding of the residual: the test turns on the last bits.
        const targets = Array.from({ length: m }, (_, i) => coefficients.slice(i * d, i * d + d).reduce((s, c, j) => s + c * x[j]!, 0) + slack[i]!);
        const tolerances = slack.map((s) => Math.abs(s) * 0.999999);
        const p = gridOf(Array(d).fill(1), m, coefficients, targets, tolerances);
        expect(new GridRecheck(p).passes(Float64Array.from(x))).toBe(gridPointPasses(p, x));
      }),
      { numRuns: 500 },
    );
  });

  it('pushes the passing nominees in order, and stops at maxPoints', () => {
    // One constraint, x0 + x1 within 2 of 3: on a 4×4 grid of 0…3 (axes offset by j·1000 removed below).
    const p = { ...gridOf([4, 4], 1, [1, 1], [3], [2]), axes: [Float64Array.of(0, 1, 2, 3), Float64Array.of(0, 1, 2, 3)] } as GridSearchProblem;
    const all = Float64Array.from({ length: 16 }, (_, i) => i);
    const sink = new PointSink(2, 100);
    expect(new GridRecheck(p).pushPassing(all, 16, sink)).toBe(true);
    const expected = [...all].map((i) => [Math.floor(i / 4), i % 4]).filter(([a, b]) => Math.abs(a! + b! - 3) <= 2);
    const got = sink.finish();
    expect(got.count).toBe(expected.length);
    expect(Array.from(got.points)).toEqual(expected.flat());
    const small = new PointSink(2, 3);
    expect(new GridRecheck(p).pushPassing(all, 16, small)).toBe(false);
    expect(small.count).toBe(3);
    expect(Array.from(small.finish().points)).toEqual(expected.slice(0, 3).flat());
  });
});
