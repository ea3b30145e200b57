import { describe, expect, it } from 'vitest';
import { CS610_DISP_PATH, CS610_GRID_PATH, Rng, gridSearchWork, readCs610Problem, reduceGrid, validateGridSearch, type GridSearchArgs, type GridSearchProblem } from '../src/index.js';

/** The pruned search's work counted node by node: the tests of levels 1 … D−1 plus one last-axis range per surviving node of level D−1. */
function exactWork(p: GridSearchProblem): number {
  const { d, m, counts, coefficients: c, targets, tolerances, axes } = p;
  const lo = new Float64Array((d + 1) * m);
  const hi = new Float64Array((d + 1) * m);
  for (let i = 0; i < m; i++) {
    for (let j = d - 1; j >= 0; j--) {
      const a = c[i * d + j]! * axes[j]![0]!;
      const b = c[i * d + j]! * axes[j]![counts[j]! - 1]!;
      lo[j * m + i] = lo[(j + 1) * m + i]! + Math.min(a, b);
      hi[j * m + i] = hi[(j + 1) * m + i]! + Math.max(a, b);
    }
  }
  const sums = new Float64Array((d + 1) * m);
  let work = 1;
  const visit = (j: number): void => {
    for (let i = 0; i < m; i++) {
      const s = sums[j * m + i]! - targets[i]!;
      if (s + lo[j * m + i]! > tolerances[i]! || s + hi[j * m + i]! < -tolerances[i]!) return;
    }
    if (j === d - 1) {
      work++;
      return;
    }
    for (let r = 0; r < counts[j]!; r++) {
      work++;
      for (let i = 0; i < m; i++) sums[(j + 1) * m + i] = sums[j * m + i]! + c[i * d + j]! * axes[j]![r]!;
      visit(j + 1);
    }
  };
  visit(0);
  return work;
}

function randomProblem(seed: number, d: number, steps: number, m: number): GridSearchArgs {
  const rng = new Rng(seed);
  const dims = Array.from({ length: d }, () => ({ lower: -1, upper: 1, step: 2 / steps }));
  const coefficients = Array.from({ length: m * d }, () => rng.next() * 2 - 1);
  const targets = Array.from({ length: m }, () => rng.next() - 0.5);
  const tolerances = Array.from({ length: m }, () => 0.05 + rng.next() * 0.5);
  return { dims, coefficients, targets, tolerances };
}

describe('gridSearchWork', () => {
  it('equals the node-by-node count when every level fits its sample', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const p = validateGridSearch(randomProblem(seed, 4, 6, 3));
      expect(gridSearchWork(p)).toBe(exactWork(p));
    }
  });

  it('estimates the CS610 search within 10% where it samples, and grows with its node tests, not its points', async () => {
    const full = await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH);
    const works: number[] = [];
    for (const steps of [5, 6]) {
      const p = validateGridSearch(reduceGrid(full, steps));
      const exact = exactWork(p);
      const estimate = gridSearchWork(p);
      expect(Math.abs(estimate / exact - 1)).toBeLessThan(0.1);
      works.push(estimate);
    }
    const p8 = validateGridSearch(reduceGrid(full, 8));
    const pFull = validateGridSearch(full);
    // 8 steps/dim has 17.7× the points of 6 and the full grid 129× those of 8.
    expect(gridSearchWork(p8) / works[1]!).toBeLessThan(6);
    expect(gridSearchWork(pFull) / gridSearchWork(p8)).toBeLessThan(4);
    expect(gridSearchWork(pFull) / gridSearchWork(p8)).toBeGreaterThan(1.2);
  });

  it('is one number per problem, however the problem is passed in', async () => {
    const args = reduceGrid(await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH), 7);
    const a = gridSearchWork(validateGridSearch(args));
    const b = gridSearchWork(validateGridSearch({ ...args, dims: args.dims.map((g) => ({ ...g })), coefficients: Array.from(args.coefficients) }));
    expect(b).toBe(a);
    // A different tolerance is another problem.
    const looser = gridSearchWork(validateGridSearch({ ...args, tolerances: Array.from(args.tolerances, (e) => e * 2) }));
    expect(looser).toBeGreaterThan(a);
  });

  it('counts one test for a grid the root bound already rules out, and none for an empty grid', () => {
    const far = { dims: [{ lower: 0, upper: 1, step: 0.25 }, { lower: 0, upper: 1, step: 0.25 }], coefficients: [1, 1], targets: [100], tolerances: [1] };
    expect(gridSearchWork(validateGridSearch(far))).toBe(1);
    expect(gridSearchWork(validateGridSearch({ ...far, dims: [{ lower: 0, upper: 0, step: 1 }, { lower: 0, upper: 1, step: 0.25 }] }))).toBe(0);
  });

  it('tests fewer candidates per level the more constraints there are: 100 000 loose constraints', () => {
    const m = 100_000;
    const dims = [{ lower: 0, upper: 1, step: 0.01 }, { lower: 0, upper: 1, step: 0.01 }];
    const many = { dims, coefficients: new Float64Array(2 * m).fill(1), targets: new Float64Array(m), tolerances: new Float64Array(m).fill(10) };
    // The root, 100 tests of the first axis (one of them run, standing for all), one last-axis range per survivor.
    expect(gridSearchWork(validateGridSearch(many))).toBe(201);
  });

  it('samples huge axes (a walk of 2^50 points would never finish): nothing pruned over 2^25 × 2^25', () => {
    const n = 2 ** 25;
    const wide = { dims: [{ lower: 0, upper: n, step: 1 }, { lower: 0, upper: n, step: 1 }], coefficients: [1, 1], targets: [0], tolerances: [4 * n] };
    // The root, 2^25 tests of the first axis, and one last-axis range per survivor.
    expect(gridSearchWork(validateGridSearch(wide))).toBe(1 + 2 * n);
  });
});
