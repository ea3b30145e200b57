import type { GridSearchProblem } from '@kernelkit/ops';
import { gridSuffixBounds } from '@kernelkit/ops/grid-shape';
import type { WasmKernels } from '../wasm/runtime.js';

/**
 * Grid-search kernels over a range of "prefixes": linear indices [start, end) over the first
 * `outer` dimensions (x1 slowest). The kernels visit prefixes in order and emit points in
 * lexicographic order, so ranges can be concatenated.
 *
 * Exactness: the CS610 reference evaluates `Σ_j c_ij·x_j` left to right. The kernels keep the running
 * prefix `P_i,j = P_i,j-1 + c_ij·x_j`, which is bit-for-bit the same sequence of f64
 * operations, so every point's final test is identical to the brute force's.
 */
export type PointCallback = (x: Float64Array) => boolean;

/**
 * The problem's fields read once per kernel call: the hot loops must not touch the problem
 * object itself, whose `axes` is a lazy getter (validateGridSearch), and a getter read per
 * grid point keeps V8 from optimising the loops fully.
 */
interface Ctx {
  readonly d: number;
  readonly m: number;
  readonly counts: readonly number[];
  readonly axes: readonly Float64Array[];
  readonly dims: GridSearchProblem['dims'];
  /** Coefficients, row-major m×d. */
  readonly c: Float64Array;
  readonly targets: Float64Array;
  readonly tolerances: Float64Array;
  /** Partial sums: P[(j+1)·m + i] after fixing x_0..x_j; row 0 is zeros. */
  readonly P: Float64Array;
  readonly x: Float64Array;
  readonly emit: PointCallback;
  /** Coefficients of the last dimension, one per constraint. */
  readonly lastC: Float64Array;
  /** The indices [lastLo, lastHi) of the last axis to visit. */
  readonly lastLo: number;
  readonly lastHi: number;
}

/** The parts of a context that depend on the problem alone, made once per problem (see `makeCtx`). */
type ProblemParts = Omit<Ctx, 'emit' | 'lastLo' | 'lastHi'>;
const partsOf = new WeakMap<GridSearchProblem, ProblemParts>();

/**
 * A kernel call's context. A search runs as many calls, one per slice or task, so the problem's
 * parts (and the scratch rows, which every call fills before reading) are made on its first.
 */
function makeCtx(p: GridSearchProblem, emit: PointCallback, lastLo: number, lastHi: number): Ctx {
  let parts = partsOf.get(p);
  if (parts === undefined) {
    const { d, m, counts, dims, coefficients: c, targets, tolerances } = p;
    const lastC = new Float64Array(m);
    for (let i = 0; i < m; i++) lastC[i] = c[i * d + d - 1]!;
    parts = { d, m, counts, axes: p.axes, dims, c, targets, tolerances, P: new Float64Array((d + 1) * Math.max(1, m)), x: new Float64Array(d), lastC };
    partsOf.set(p, parts);
  }
  // Written out rather than spread, so that every context has one shape (V8 optimises the loops on it).
  const { d, m, counts, axes, dims, c, targets, tolerances, P, x, lastC } = parts;
  return { d, m, counts, axes, dims, c, targets, tolerances, P, x, emit, lastC, lastLo, lastHi: Math.min(lastHi, counts[d - 1]!) };
}

/** Sets x_j = axes[j][r] and the partial sums of level j+1. */
function fix(ctx: Ctx, j: number, r: number): void {
  const { d, m, c, P, x } = ctx;
  const xv = ctx.axes[j]![r]!;
  x[j] = xv;
  for (let i = 0; i < m; i++) P[(j + 1) * m + i] = P[j * m + i]! + c[i * d + j]! * xv;
}

/** Exact test of the last coordinate given the partial sums through x_{D-2}. */
function lastPasses(ctx: Ctx, xv: number): boolean {
  const { d, m, c, P, targets: t, tolerances: e } = ctx;
  const j = d - 1;
  const base = j * m;
  for (let i = 0; i < m; i++) {
    const s = P[base + i]! + c[i * d + j]! * xv;
    if (!(Math.abs(s - t[i]!) <= e[i]!)) return false;
  }
  return true;
}

function decodePrefix(ctx: Ctx, outer: number, index: number): void {
  const counts = ctx.counts;
  const rs: number[] = new Array<number>(outer);
  for (let j = outer - 1; j >= 0; j--) {
    rs[j] = index % counts[j]!;
    index = Math.floor(index / counts[j]!);
  }
  for (let j = 0; j < outer; j++) fix(ctx, j, rs[j]!);
}

/** Number of prefixes over the first `outer` dimensions. */
export function prefixCount(p: GridSearchProblem, outer: number): number {
  let n = 1;
  for (let j = 0; j < outer; j++) n *= p.counts[j]!;
  return n;
}

// ---------------------------------------------------------------- naive (brute force)

function naiveFrom(ctx: Ctx, j: number): boolean {
  const count = ctx.counts[j]!;
  if (j === ctx.d - 1) return naiveLast(ctx);
  for (let r = 0; r < count; r++) {
    fix(ctx, j, r);
    if (!naiveFrom(ctx, j + 1)) return false;
  }
  return true;
}

/**
 * The brute force's hot loop: every value of the last axis against every constraint, with
 * everything it touches in locals (this loop runs ~10^11 times on the full CS610 grid).
 */
function naiveLast(ctx: Ctx): boolean {
  const { d, m, P, x, lastC } = ctx;
  const j = d - 1;
  const axis = ctx.axes[j]!;
  const count = ctx.lastHi;
  const base = j * m;
  const t = ctx.targets;
  const e = ctx.tolerances;
  for (let r = ctx.lastLo; r < count; r++) {
    const xv = axis[r]!;
    let i = 0;
    for (; i < m; i++) {
      const s = P[base + i]! + lastC[i]! * xv;
      if (!(Math.abs(s - t[i]!) <= e[i]!)) break;
    }
    if (i === m) {
      x[j] = xv;
      if (!ctx.emit(x)) return false;
    }
  }
  return true;
}

/**
 * Visits every point of every prefix in [start, end). Returns false if `emit` asked to stop.
 * [lastLo, lastHi) narrows the last axis, so that one prefix's points can be split into slices
 * (with `outer` < D; ignored when every dimension is in the prefix).
 */
export function gridNaiveRange(p: GridSearchProblem, outer: number, start: number, end: number, emit: PointCallback, lastLo = 0, lastHi = Infinity): boolean {
  if (p.total === 0) return true;
  const ctx = makeCtx(p, emit, lastLo, lastHi);
  for (let idx = start; idx < end; idx++) {
    decodePrefix(ctx, outer, idx);
    if (outer === p.d) {
      // Every dimension is in the prefix: decodePrefix fixed the whole point.
      if (lastPassesFull(ctx) && !emit(ctx.x)) return false;
      continue;
    }
    if (!naiveFrom(ctx, outer)) return false;
  }
  return true;
}

function lastPassesFull(ctx: Ctx): boolean {
  // fix() already filled P through level d; the test is |P_d − t| <= e.
  const { d, m, P, targets, tolerances } = ctx;
  for (let i = 0; i < m; i++) if (!(Math.abs(P[d * m + i]! - targets[i]!) <= tolerances[i]!)) return false;
  return true;
}

// ---------------------------------------------------------------- pruned (exact interval bounds)

interface Bounds {
  /** lo/hi[j·m + i] = min/max over the remaining axes j..D-1 of Σ c_ik·x_k. */
  readonly lo: Float64Array;
  readonly hi: Float64Array;
  /** Per constraint: slack covering every rounding in the bound test (see `pruneSlack`). */
  readonly slack: Float64Array;
}

/**
 * Safe margin: every partial sum, suffix bound and target is at most M_i = Σ_j max|c_ij·x_j|
 * + |d_i| + e_i in magnitude, and each of the ≤ 2D+4 f64 roundings involved errs by at most
 * 2^-53·M_i, so (2D+4)·2^-53·M_i < 1e-12·M_i bounds the total for D ≤ 32. Pruning with
 * this slack can only keep extra candidates, never drop a passing point; every survivor
 * gets the exact test.
 */
function pruneBounds(p: GridSearchProblem): Bounds {
  const { d, m, coefficients: c } = p;
  const slack = new Float64Array(m);
  for (let i = 0; i < m; i++) {
    let mag = Math.abs(p.targets[i]!) + p.tolerances[i]!;
    for (let j = d - 1; j >= 0; j--) {
      const axis = p.axes[j]!;
      mag += Math.max(Math.abs(c[i * d + j]! * axis[0]!), Math.abs(c[i * d + j]! * axis[axis.length - 1]!));
    }
    slack[i] = 1e-12 * mag;
  }
  return { ...gridSuffixBounds(p), slack };
}

const boundsOf = new WeakMap<GridSearchProblem, Bounds>();

/** `pruneBounds(p)`, made once per problem. */
function pruneBoundsOnce(p: GridSearchProblem): Bounds {
  let b = boundsOf.get(p);
  if (b === undefined) boundsOf.set(p, (b = pruneBounds(p)));
  return b;
}

/** True when no completion of the prefix x_0..x_{j-1} can satisfy every constraint. */
function infeasible(ctx: Ctx, b: Bounds, j: number): boolean {
  const { m, P, targets, tolerances } = ctx;
  for (let i = 0; i < m; i++) {
    const s = P[j * m + i]! - targets[i]!;
    const e = tolerances[i]! + b.slack[i]!;
    if (s + b.lo[j * m + i]! > e || s + b.hi[j * m + i]! < -e) return true;
  }
  return false;
}

/**
 * Index range of the last axis that can pass, from each constraint's linear bound, widened by
 * one index and the slack so rounding in the division cannot exclude a passing point.
 */
function lastRange(ctx: Ctx, b: Bounds, out: Float64Array): void {
  const { d, m, c, P, targets, tolerances } = ctx;
  const j = d - 1;
  const g = ctx.dims[j]!;
  let rLo = 0;
  let rHi = ctx.counts[j]! - 1;
  for (let i = 0; i < m && rLo <= rHi; i++) {
    const ci = c[i * d + j]!;
    const s = P[j * m + i]! - targets[i]!;
    const e = tolerances[i]! + b.slack[i]!;
    if (ci === 0) {
      if (Math.abs(s) > e) rHi = -1;
      continue;
    }
    // Need -e <= s + ci·x <= e.
    let t0 = (-e - s) / ci;
    let t1 = (e - s) / ci;
    if (ci < 0) [t0, t1] = [t1, t0];
    const a = Math.ceil((t0 - g.lower) / g.step) - 1;
    const z = Math.floor((t1 - g.lower) / g.step) + 1;
    if (a > rLo) rLo = a;
    if (z < rHi) rHi = z;
  }
  out[0] = rLo;
  out[1] = rHi;
}

function prunedFrom(ctx: Ctx, b: Bounds, j: number, range: Float64Array): boolean {
  const { x } = ctx;
  if (infeasible(ctx, b, j)) return true;
  const axis = ctx.axes[j]!;
  if (j === ctx.d - 1) {
    lastRange(ctx, b, range);
    const hi = Math.min(range[1]!, ctx.lastHi - 1);
    for (let r = Math.max(range[0]!, ctx.lastLo); r <= hi; r++) {
      const xv = axis[r]!;
      if (lastPasses(ctx, xv)) {
        x[j] = xv;
        if (!ctx.emit(x)) return false;
      }
    }
    return true;
  }
  const count = ctx.counts[j]!;
  for (let r = 0; r < count; r++) {
    fix(ctx, j, r);
    if (!prunedFrom(ctx, b, j + 1, range)) return false;
  }
  return true;
}

/** Same points as `gridNaiveRange`, skipping sub-grids that interval bounds prove empty. */
export function gridPrunedRange(p: GridSearchProblem, outer: number, start: number, end: number, emit: PointCallback, lastLo = 0, lastHi = Infinity): boolean {
  if (p.total === 0) return true;
  if (outer === p.d) return gridNaiveRange(p, outer, start, end, emit);
  const ctx = makeCtx(p, emit, lastLo, lastHi);
  const b = pruneBoundsOnce(p);
  const range = new Float64Array(2);
  for (let idx = start; idx < end; idx++) {
    decodePrefix(ctx, outer, idx);
    if (!prunedFrom(ctx, b, outer, range)) return false;
  }
  return true;
}

// ---------------------------------------------------------------- pruned, on the WebAssembly SIMD kernels

/** Byte offsets of the search header's fields (i32 unless f64), as `gridPruned` in assembly/kernels.ts reads them. */
const GRID = {
  d: 0, m: 4, mP: 8, outer: 12, lastLo: 16, lastHi: 20, cT: 24, T: 28, eS: 32, E: 36, lo: 40, hi: 44, P: 48, X: 52,
  lowers: 56, steps: 60, counts: 64, pos: 68, level: 72, lastEnd: 76, prefix: 80, prefixEnd: 88, budget: 96, done: 100,
} as const;
const F64_FIELDS: ReadonlySet<keyof typeof GRID> = new Set(['prefix', 'prefixEnd']);
const HEADER_BYTES = 112;
/**
 * The most budget one kernel call takes (a few ms of work). WebAssembly has no on-stack
 * replacement: a call that starts in the engine's baseline code stays there to its end, so one
 * long call would run a search unoptimised; later calls pick up the optimised code.
 */
const MAX_CALL_BUDGET = 2 ** 18;
/** Points the kernel writes before handing them over (a resumable search: more only costs calls). */
const OUT_POINTS = 1024;

/** The regions `layOut` places after the header, in order, with their sizes in bytes. */
function regions(d: number, mP: number) {
  const row = mP * 8;
  return { cT: d * row, T: row, eS: row, E: row, lo: (d + 1) * row, hi: (d + 1) * row, P: (d + 1) * row, X: d * 8, lowers: d * 8, steps: d * 8, counts: d * 4, pos: d * 4, out: OUT_POINTS * d * 8 };
}

/**
 * Lays the problem and the search of prefixes [start, end) out in `w`'s memory for `gridPruned`,
 * header at 0: constraints padded to an even count `mP` with a lane that never prunes (target 0,
 * slack-widened tolerance +∞, bounds 0), coefficients transposed so that each axis's are one row.
 * The kernel computes axis values itself, as gridAxisValues does, so memory does not grow with
 * the axes. Returns the output's address.
 */
function layOut(w: WasmKernels, p: GridSearchProblem, b: Bounds, outer: number, start: number, end: number, lastLo: number, lastHi: number): number {
  const { d, m, counts } = p;
  const mP = m + (m & 1);
  const sizes = regions(d, mP);
  const at = {} as Record<keyof typeof sizes, number>;
  let top = HEADER_BYTES;
  for (const [name, bytes] of Object.entries(sizes) as [keyof typeof sizes, number][]) {
    at[name] = top;
    top += Math.ceil(bytes / 16) * 16;
  }
  w.reserve(top);
  const f64 = w.f64;
  const i32 = new Int32Array(w.buffer, 0, top >> 2);
  // Zero rows and padding lanes are read as such; the output region needs no clearing.
  f64.fill(0, 0, at.out >> 3);
  const c = p.coefficients;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < d; j++) f64[(at.cT >> 3) + j * mP + i] = c[i * d + j]!;
    f64[(at.T >> 3) + i] = p.targets[i]!;
    f64[(at.eS >> 3) + i] = p.tolerances[i]! + b.slack[i]!;
    f64[(at.E >> 3) + i] = p.tolerances[i]!;
    for (let j = 0; j <= d; j++) {
      f64[(at.lo >> 3) + j * mP + i] = b.lo[j * m + i]!;
      f64[(at.hi >> 3) + j * mP + i] = b.hi[j * m + i]!;
    }
  }
  if (mP > m) f64[(at.eS >> 3) + m] = Infinity;
  p.dims.forEach((g, j) => {
    f64[(at.lowers >> 3) + j] = g.lower;
    f64[(at.steps >> 3) + j] = g.step;
    i32[(at.counts >> 2) + j] = counts[j]!;
  });
  const header: Record<keyof typeof GRID, number> = { ...at, d, m, mP, outer, lastLo, lastHi, level: -1, lastEnd: 0, prefix: start, prefixEnd: end, budget: 0, done: 0 };
  for (const [name, offset] of Object.entries(GRID) as [keyof typeof GRID, number][]) {
    if (F64_FIELDS.has(name)) f64[offset >> 3] = header[name];
    else i32[offset >> 2] = header[name];
  }
  return at.out;
}

/**
 * One pruned search on the WebAssembly SIMD kernels, laid out once in `w`'s memory (which it
 * needs to itself until done) and run in steps of bounded work: the same search as
 * `gridPrunedRange`, the same sub-grids pruned, the same points in the same order (each
 * constraint in its own f64 lane, multiply and add never fused).
 */
export class GridSearchSimd {
  private readonly out: number;
  private readonly header: Int32Array;
  /**
   * The points of prefixes [start, end) over the first `outer` dimensions (outer < d), and of
   * last-axis indices [lastLo, lastHi) within each.
   */
  constructor(
    private readonly w: WasmKernels,
    private readonly p: GridSearchProblem,
    outer: number,
    start: number,
    end: number,
    lastLo = 0,
    lastHi = Infinity,
  ) {
    this.out = layOut(w, p, pruneBoundsOnce(p), outer, start, Math.max(start, end), lastLo, Math.min(lastHi, p.counts[p.d - 1]!));
    this.header = new Int32Array(w.buffer, 0, HEADER_BYTES >> 2);
  }
  get done(): boolean {
    return this.header[GRID.done >> 2] === 1;
  }
  /**
   * Makes this a search of prefixes [start, end) in the same layout, from their beginning (level
   * -1: the next step decodes a prefix and recomputes every row under it).
   */
  restart(start: number, end: number): void {
    const f64 = new Float64Array(this.w.buffer, 0, HEADER_BYTES >> 3);
    f64[GRID.prefix >> 3] = start;
    f64[GRID.prefixEnd >> 3] = Math.max(start, end);
    const h = this.header;
    h[GRID.level >> 2] = -1;
    h[GRID.done >> 2] = 0;
  }
  /**
   * Searches on until done or until it has spent `budget` (one unit per node of the search tree
   * and per last-axis candidate tested), handing each passing point to `emit`. False when `emit`
   * asked to stop.
   */
  run(emit: PointCallback, budget = Infinity): boolean {
    const { d } = this.p;
    const h = this.header;
    let left = budget;
    while (!this.done && left > 0) {
      const given = Math.min(left, MAX_CALL_BUDGET);
      h[GRID.budget >> 2] = given;
      const n = this.w.k.gridPruned(0, this.out, OUT_POINTS);
      left -= given - h[GRID.budget >> 2]!;
      const points = new Float64Array(this.w.buffer, this.out, n * d);
      for (let k = 0; k < n; k++) if (!emit(points.subarray(k * d, k * d + d))) return false;
    }
    return true;
  }
  /**
   * Grid points in lexicographic order before the search's position, for a search of the whole
   * grid (`outer` 0): how far it has come.
   */
  covered(): number {
    if (this.done) return this.p.total;
    const { counts } = this.p;
    const h = this.header;
    const level = h[GRID.level >> 2]!;
    // Between prefixes: before the one prefix of the whole grid, or after it.
    if (level < 0) return new Float64Array(this.w.buffer, GRID.prefix, 1)[0]! > 0 ? this.p.total : 0;
    const pos = new Int32Array(this.w.buffer, h[GRID.pos >> 2]!, counts.length);
    let points = 0;
    // below: the grid points under one index of axis j (the product of the later axes' counts).
    for (let j = counts.length - 1, below = 1; j >= 0; below *= counts[j]!, j--) {
      // pos holds the next index on each level: the ancestors' current one is one before it.
      if (j <= level) points += (j < level ? pos[j]! - 1 : pos[j]!) * below;
    }
    return points;
  }
}

/** `gridPrunedRange` on the WebAssembly SIMD kernels (`GridSearchSimd` run to the end). */
export function gridPrunedRangeSimd(w: WasmKernels, p: GridSearchProblem, outer: number, start: number, end: number, emit: PointCallback, lastLo = 0, lastHi = Infinity): boolean {
  if (p.total === 0) return true;
  if (outer === p.d) return gridNaiveRange(p, outer, start, end, emit);
  return new GridSearchSimd(w, p, outer, start, end, lastLo, lastHi).run(emit);
}

/**
 * `gridPrunedRangeSimd` for many ranges of one problem in turn, laid out in `w`'s memory once
 * (on the first range) and restarted for each: `w` is the search's until its last range is done.
 */
export function gridPrunedRangesSimd(w: WasmKernels, p: GridSearchProblem, outer: number): (start: number, end: number, emit: PointCallback) => boolean {
  if (p.total === 0) return () => true;
  if (outer === p.d) return (start, end, emit) => gridNaiveRange(p, outer, start, end, emit);
  let search: GridSearchSimd | undefined;
  return (start, end, emit) => {
    if (search === undefined) search = new GridSearchSimd(w, p, outer, start, end);
    else search.restart(start, end);
    return search.run(emit);
  };
}
