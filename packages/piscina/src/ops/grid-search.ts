import { gridNaiveRange, gridPrunedRange, gridPrunedRangeSimd, limitError, outerDims, prefixCount, wasmSupport, withKernels, type PointCallback } from '@kernelkit/cpu';
import { PointSink, type GridPoints, type GridSearchProblem, type OpContext, type OpImplementation, type OpOutput } from '@kernelkit/ops';
import { split } from '../call.js';
import type { GridKernel, GridTaskResult, SharedGridProblem } from '../protocol.js';
import { INLINE_NOTE, inline, newCall, type Env } from './context.js';

/** Tasks per thread: pruning makes prefixes very uneven, so many small tasks balance the load. */
const TASKS_PER_THREAD = 8;
/** Fewest grid points worth a task (~0.3 ms of brute force): small grids get fewer tasks. */
const MIN_TASK_POINTS = 2 ** 14;

/**
 * Ranges of prefixes (linear indices over the first `outer` dimensions, x1 slowest), about
 * 8 per thread. Each worker runs the CPU backend's range kernel and returns its passing points
 * as a transferred Float64Array; ranges are concatenated in index order, which is the
 * lexicographic order of the points, so the result is the sequential result exactly.
 * `signal` goes to Piscina: queued ranges are dropped and running ones end with their thread.
 * More than `maxPoints` points in total cancels the rest and rejects with LimitExceededError.
 */
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

/** `kernel` runs on the workers, `here` on this thread when the call runs inline. */
function searchOn(env: Env, kernel: GridKernel, here: InlineKernel) {
  return async (p: GridSearchProblem, ctx: OpContext<GridPoints>): Promise<OpOutput<GridPoints>> => {
    if (p.total === 0) return { data: { count: 0, dims: p.d, points: new Float64Array(0) } };
    if (inline(env, 'gridSearch', p.total)) {
      const sink = new PointSink(p.d, p.maxPoints);
      const outer = outerDims(p, 1);
      if (!here(p, outer, 0, prefixCount(p, outer), (x) => sink.push(x))) throw limitError(p);
      ctx.onProgress?.({ done: 1, total: 1, unit: 'tasks' });
      return { data: sink.finish(), notes: [INLINE_NOTE] };
    }
    const want = Math.max(1, Math.min(env.pool.threads * TASKS_PER_THREAD, Math.floor(p.total / MIN_TASK_POINTS)));
    // Prefixes ≥ 8 per task where the grid allows, so ranges differ by at most 1 prefix in 8
    // (13^10 on 16 threads: 2197 prefixes of 3 dimensions in 128 ranges, not 169 of 2).
    const outer = outerDims(p, want * 8);
    const ranges = split(prefixCount(p, outer), want);
    const call = newCall(env, 'gridSearch', ctx.signal);
    const shared = share(p, call.acquire(8 * (p.counts.reduce((a, c) => a + c, 0) + p.m * p.d + 2 * p.m)));
    const parts: Float64Array[] = new Array<Float64Array>(ranges.length);
    let done = 0;
    let count = 0;
    ranges.forEach(([start, end], i) => {
      call.submit({ kind: 'grid', problem: shared, kernel, outer, start, end }, (r: GridTaskResult) => {
        if (!(r instanceof Float64Array)) throw limitError(p);
        count += r.length / p.d;
        if (count > p.maxPoints) throw limitError(p);
        parts[i] = r;
        ctx.onProgress?.({ done: ++done, total: ranges.length, unit: 'tasks' });
      });
    });
    await call.finish();
    const points = new Float64Array(count * p.d);
    let o = 0;
    for (const part of parts) {
      points.set(part, o);
      o += part.length;
    }
    return { data: { count, dims: p.d, points } };
  };
}

/** `wasm-simd` (the pruned search on the WebAssembly SIMD kernels, in every worker) is the default where the runtime has WebAssembly SIMD. */
export function gridSearchOp(env: Env): OpImplementation<'gridSearch'> {
  const s = wasmSupport();
  const js = { pruned: searchOn(env, 'pruned', gridPrunedRange), naive: searchOn(env, 'naive', gridNaiveRange) };
  if (!('module' in s)) return { defaultVariant: 'pruned', variants: js };
  const simd: InlineKernel = (...a) => withKernels(s, (w) => gridPrunedRangeSimd(w, ...a));
  return { defaultVariant: 'wasm-simd', variants: { 'wasm-simd': searchOn(env, 'wasm-simd', simd), ...js } };
}
