import { gridNaiveRange, gridPrunedRange, gridPrunedRangeSimd, limitError, outerDims, prefixCount, wasmSupport, withKernels, type PointCallback } from '@kernelkit/cpu';
import { PointSink, type GridPoints, type GridSearchProblem, type OpContext, type OpImplementation, type OpOutput } from '@kernelkit/ops';
import { split } from '../call.js';
import { GRID_DONE, GRID_WORDS, type GridKernel, type GridTaskResult, type SharedGridProblem } from '../protocol.js';
import { INLINE_NOTE, inline, newCall, type Env } from './context.js';

/** Ranges per thread: pruning makes prefixes very uneven, so many small ranges balance the load. */
const RANGES_PER_THREAD = 64;
/** Fewest grid points worth a range (~0.3 ms of brute force): small grids get fewer ranges. */
const MIN_RANGE_POINTS = 2 ** 14;
/** How often progress is reported while the workers search. */
const PROGRESS_MS = 100;

let nextProblemId = 1;

/** The problem's arrays in one shared buffer (see `SharedGridProblem`); the tasks carry only numbers. */
function share(p: GridSearchProblem, sab: SharedArrayBuffer): SharedGridProblem {
  const all = new Float64Array(sab);
  let o = 0;
  for (const a of [...p.axes, p.coefficients, p.targets, p.tolerances]) {
    all.set(a, o);
    o += a.length;
  }
  const { dims, d, m, counts, total, maxPoints } = p;
  return { id: nextProblemId++, meta: { dims, d, m, counts, total, maxPoints }, data: { buf: sab, off: 0, len: all.length, dtype: 'f64' } };
}

/** A search on this thread, for calls run inline: the points of prefixes [start, end) to `emit`, false when it asked to stop. */
type InlineKernel = (p: GridSearchProblem, outer: number, start: number, end: number, emit: PointCallback) => boolean;

/**
 * Ranges of prefixes (linear indices over the first `outer` dimensions, x1 slowest), about 64
 * per thread, claimed in order by one task per thread from a shared counter. Each task runs the
 * CPU backend's range kernel on the ranges it claims and returns their points; ranges are put
 * back in index order, which is the lexicographic order of the points, so the result is the
 * sequential result exactly. More than `maxPoints` points in total stops every task (a shared
 * tally) and rejects with LimitExceededError. `signal` goes to Piscina: running tasks end with
 * their thread. `kernel` runs on the workers, `here` on this thread when the call runs inline.
 */
function searchOn(env: Env, kernel: GridKernel, here: InlineKernel) {
  return async (p: GridSearchProblem, ctx: OpContext<GridPoints>): Promise<OpOutput<GridPoints>> => {
    if (p.total === 0) return { data: { count: 0, dims: p.d, points: new Float64Array(0) } };
    if (inline(env, 'gridSearch', p.total)) {
      const sink = new PointSink(p.d, p.maxPoints);
      const outer = outerDims(p, 1);
      if (!here(p, outer, 0, prefixCount(p, outer), (x) => sink.push(x))) throw limitError(p);
      ctx.onProgress?.({ done: 1, total: 1, unit: 'ranges' });
      return { data: sink.finish(), notes: [INLINE_NOTE] };
    }
    const want = Math.max(1, Math.min(env.pool.threads * RANGES_PER_THREAD, Math.floor(p.total / MIN_RANGE_POINTS)));
    const outer = outerDims(p, want);
    const prefixes = prefixCount(p, outer);
    const call = newCall(env, 'gridSearch', ctx.signal);
    const shared = share(p, call.acquire(8 * (p.counts.reduce((a, c) => a + c, 0) + p.m * p.d + 2 * p.m)));
    const tallyBuffer = call.acquire(GRID_WORDS * 4);
    const tally = new Int32Array(tallyBuffer).fill(0);
    const units = call.units(split(prefixes, want).map(([start]) => start).concat(prefixes));
    const results: Float64Array[] = [];
    let exceeded = false;
    units.run({ kind: 'grid', problem: shared, kernel, outer, tally: tallyBuffer, bounds: units.bounds, ctrl: units.ctrl }, call.threads, undefined, (r: GridTaskResult) => {
      if (r instanceof Float64Array) results.push(r);
      else exceeded = true;
    });
    let reported = 0;
    // A throwing onProgress fails the call and is rethrown as it is.
    const timer = setInterval(() => {
      const done = Atomics.load(tally, GRID_DONE);
      if (done === reported || ctx.onProgress === undefined) return;
      reported = done;
      try {
        ctx.onProgress({ done, total: units.count, unit: 'ranges' });
      } catch (err) {
        call.fail(err);
      }
    }, PROGRESS_MS);
    try {
      // The task whose points took the tally past maxPoints answers `exceeded`.
      await call.finish();
    } finally {
      clearInterval(timer);
    }
    if (exceeded) throw limitError(p);
    const data = gather(p.d, units.count, results);
    if (data.count > p.maxPoints) throw limitError(p);
    if (reported !== units.count) ctx.onProgress?.({ done: units.count, total: units.count, unit: 'ranges' });
    return { data };
  };
}

/** The tasks' points in range order (see `GridTaskResult`). */
function gather(d: number, ranges: number, results: readonly Float64Array[]): GridPoints {
  const from = new Array<Float64Array>(ranges);
  const at = new Float64Array(ranges);
  const found = new Float64Array(ranges);
  for (const r of results) {
    const k = r[0]!;
    let o = 1 + 2 * k;
    for (let i = 0; i < k; i++) {
      const u = r[1 + 2 * i]!;
      from[u] = r;
      at[u] = o;
      found[u] = r[2 + 2 * i]!;
      o += found[u]! * d;
    }
  }
  const count = found.reduce((a, n) => a + n, 0);
  const points = new Float64Array(count * d);
  let o = 0;
  for (let u = 0; u < ranges; u++) {
    const n = found[u]! * d;
    if (n > 0) points.set(from[u]!.subarray(at[u]!, at[u]! + n), o);
    o += n;
  }
  return { count, dims: d, points };
}

/** `wasm-simd` (the pruned search on the WebAssembly SIMD kernels, in every worker) is the default where the runtime has WebAssembly SIMD. */
export function gridSearchOp(env: Env): OpImplementation<'gridSearch'> {
  const s = wasmSupport();
  const js = { pruned: searchOn(env, 'pruned', gridPrunedRange), naive: searchOn(env, 'naive', gridNaiveRange) };
  if (!('module' in s)) return { defaultVariant: 'pruned', variants: js };
  const simd: InlineKernel = (...a) => withKernels(s, (w) => gridPrunedRangeSimd(w, ...a));
  return { defaultVariant: 'wasm-simd', variants: { 'wasm-simd': searchOn(env, 'wasm-simd', simd), ...js } };
}
