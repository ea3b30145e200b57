import { gridAxisValue, gridSuffixBounds } from './shape.js';
import type { GridSearchProblem } from './types.js';

/**
 * The pruned search's work: how many prefix nodes it tests against the interval bounds (levels
 * 1 … D−1), plus one last-axis range per surviving node of level D−1. The backends' default
 * kernels all run that search, and its work grows far slower than the point count (the full
 * CS610 grid has 129× the points of 8 steps/dim and about 2× the node tests), so this, not
 * `total`, is what a time model of the grid search can extrapolate in.
 */
export function gridSearchWork(p: GridSearchProblem): number {
  const key = problemKey(p);
  const known = memo.get(key);
  if (known !== undefined) {
    memo.delete(key);
    memo.set(key, known);
    return known;
  }
  const work = estimatePrunedWork(p);
  memo.set(key, work);
  if (memo.size > MEMO_ENTRIES) memo.delete(memo.keys().next().value!);
  return work;
}

/** Constraint rows a level's sample holds at most: candidate tests per level (each up to m rows of work) and carried nodes (m sums each). */
const LEVEL_ROWS = 2 ** 15;
/** Candidate children tested per level at most; beyond it an evenly spaced sample stands for them. */
const LEVEL_TESTS = 4096;
/** Surviving nodes carried to the next level at most (an evenly spaced sample of the survivors). */
const LEVEL_NODES = 512;
/** Problems remembered: a routed caller repeats one problem, and the estimate costs a few ms. */
const MEMO_ENTRIES = 16;
const memo = new Map<string, number>();

/**
 * Two independent 32-bit hashes of every number the estimate reads, with the sizes: a key of
 * fixed length, however many constraints (a key that spelled the numbers out would be larger
 * than the problem). A collision could only misroute a call, never change its result.
 */
function problemKey(p: GridSearchProblem): string {
  const dims = new Float64Array(3 * p.d);
  p.dims.forEach((g, j) => dims.set([g.lower, g.step, g.upper], 3 * j));
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (const values of [dims, p.coefficients, p.targets, p.tolerances]) {
    const words = new Uint32Array(values.buffer, values.byteOffset, values.length * 2);
    for (let i = 0; i < words.length; i++) {
      a = Math.imul(a ^ words[i]!, 0x01000193);
      b = Math.imul(b ^ words[i]!, 0x5bd1e995);
      b ^= b >>> 15;
    }
  }
  return `${p.d}:${p.m}:${a >>> 0}:${b >>> 0}`;
}

/**
 * Walks the pruned tree level by level, every node of a level standing for the same number of
 * real nodes (`weight`): at most LEVEL_TESTS evenly spaced children are tested and at most
 * LEVEL_NODES evenly spaced survivors go on (fewer with many constraints, see LEVEL_ROWS), each
 * sampling step scaling the weight. Evenly spaced samples in lexicographic order follow the
 * tree's shape, and the walk is deterministic, so one problem always gets one estimate. Each
 * level's time and memory are bounded by max(LEVEL_ROWS, m) constraint rows, whatever the grid's size.
 */
function estimatePrunedWork(p: GridSearchProblem): number {
  const { d, m, counts, dims, coefficients: c, targets, tolerances } = p;
  if (p.total === 0) return 0;
  // The kernels' prune bounds, without their rounding slack.
  const { lo, hi } = gridSuffixBounds(p);
  const maxTests = Math.max(1, Math.min(LEVEL_TESTS, Math.floor(LEVEL_ROWS / Math.max(1, m))));
  const maxNodes = Math.min(LEVEL_NODES, maxTests);
  // Each node is its partial sums minus the targets, one row of m.
  let nodes = new Float64Array(m);
  for (let i = 0; i < m; i++) nodes[i] = -targets[i]!;
  const row = new Float64Array(m);
  const childOf = (j: number, at: number, out: Float64Array, outAt: number): void => {
    const node = Math.floor(at / counts[j]!);
    const x = gridAxisValue(dims[j]!, at - node * counts[j]!);
    for (let i = 0; i < m; i++) out[outAt + i] = nodes[node * m + i]! + c[i * d + j]! * x;
  };
  const feasible = (s: Float64Array, at: number, level: number): boolean => {
    for (let i = 0; i < m; i++) {
      const v = s[at + i]!;
      const e = tolerances[i]!;
      if (v + lo[level * m + i]! > e || v + hi[level * m + i]! < -e) return false;
    }
    return true;
  };
  let count = 1;
  let weight = 1;
  let work = 1;
  if (!feasible(nodes, 0, 0)) return work;
  const survivors = new Float64Array(maxTests);
  for (let j = 0; j < d - 1; j++) {
    const candidates = count * counts[j]!;
    work += weight * candidates;
    const tests = Math.min(candidates, maxTests);
    const stride = candidates / tests;
    let kept = 0;
    for (let k = 0; k < tests; k++) {
      const at = tests === candidates ? k : Math.floor((k + 0.5) * stride);
      childOf(j, at, row, 0);
      if (feasible(row, 0, j + 1)) survivors[kept++] = at;
    }
    if (kept === 0) return work;
    const carried = Math.min(kept, maxNodes);
    const next = new Float64Array(carried * m);
    for (let k = 0; k < carried; k++) childOf(j, survivors[carried === kept ? k : Math.floor(((k + 0.5) * kept) / carried)]!, next, k * m);
    weight *= stride * (kept / carried);
    nodes = next;
    count = carried;
  }
  // One last-axis range per surviving node of level D−1 (the kernels' lastRange).
  return work + weight * count;
}
