import { LimitExceededError, throwIfAborted } from '@kernelkit/core';
import { GridRecheck, PointSink, U32F, type GridPoints, type GridSearchProblem, type OpContext, type OpImplementation, type OpOutput } from '@kernelkit/ops';
import type { Dispatch, GpuDevice } from '../runtime/device.js';
import { packParams, vec4Array } from '../runtime/params.js';
import { grid1d } from '../runtime/usage.js';
import { progressSum, runShards, shardContext, shardNote, shardTimes } from '../runtime/shards.js';
import { addMs, callTimes, SUBMIT_MS, workPerSubmit, type WorkRate } from './common.js';

/**
 * Constraint terms (point × constraint × dimension) per ms, a low estimate (see WorkRate) for
 * every variant: the pruned and optimized kernels skip work the estimate counts, so their
 * submits only get shorter. llvmpipe on two cores gets about twice this with the naive kernel.
 */
const RATE: WorkRate = { software: 1.5e5, hardware: 5e9 };

/** The nominee count a slice starts from. */
const ZERO_COUNT = new Uint32Array(1);

/** Threads one dispatch runs at most: the kernels index them in u32 (first + threads < 2^32). */
const DISPATCH_THREADS = 2 ** 30;
import { gridNaive, gridOptimized, gridPruned, PRUNED_DEPTH, type GridShape } from './grid-search.wgsl.js';


/** The next f32 above `v` (v >= 0): rounding a threshold up keeps the screen conservative. */
function f32Up(v: number): number {
  const f = Math.fround(v);
  if (f > v || !Number.isFinite(f)) return f;
  const b = new Float32Array([f]);
  const i = new Uint32Array(b.buffer);
  i[0]! += 1;
  return b[0]!;
}

/**
 * Screening thresholds. The GPU evaluates r̂ = fl32(Σ_j ĉ_ij·x̂_j − d̂_i) with inputs rounded
 * to f32 (relative error u = 2⁻²⁴ each), D products and D−1 additions in any order (FMA or
 * not) and one subtraction: the standard bound gives
 *   |r̂ − r| ≤ γ_{D+3}·(S_i + |d_i|),  S_i = Σ_j |c_ij|·max_r |x_j|,  γ_n = n·u/(1 − n·u),
 * where r is the exact residual; the CS610 reference's f64 evaluation differs from r by γ⁽⁶⁴⁾_{D+1}·(…),
 * 2²⁹ times smaller. δ_i = 2·(D+4)·u·(S_i + |d_i|) covers both with room (the factor 2 absorbs
 * the 1/(1 − n·u) and the f64 term), plus an absolute D·2⁻¹²⁰ for flushed subnormals. So
 * |r̂| ≤ e_i + δ_i whenever |r| ≤ e_i: every point that passes in f64 passes the f32 screen
 * against thr_i = f32-round-up(e_i + δ_i). The screen only nominates; every nominee is re-tested
 * with `GridRecheck` (gridPointPasses' f64 test), so the output equals the f64 brute force exactly.
 */
export function screenThresholds(p: GridSearchProblem): Float32Array {
  const maxAbs = p.axes.map((a) => a.reduce((m, v) => Math.max(m, Math.abs(v)), 0));
  const thr = new Float32Array(p.m);
  for (let i = 0; i < p.m; i++) {
    let s = Math.abs(p.targets[i]!);
    for (let j = 0; j < p.d; j++) s += Math.abs(p.coefficients[i * p.d + j]!) * maxAbs[j]!;
    const delta = 2 * (p.d + 4) * U32F * s + p.d * 2 ** -120;
    // Past f32 range the screen cannot judge: an infinite threshold nominates every point.
    thr[i] = s > 1e37 ? Number.POSITIVE_INFINITY : f32Up(p.tolerances[i]! + delta);
  }
  return thr;
}

/**
 * Interval bounds for the pruned kernel: for each level l = 0 … r (the axes from d − r + l on
 * still free) and constraint i, [lo, hi] ∋ Σ_{free j} c_ij·x_j for every choice of the free x_j
 * (computed in f64, stored as f32 pairs, level-major).
 *
 * Why skipping a subtree on them never drops a point the f64 search keeps: the kernel skips when
 * v̂ = fl32(fl32(ŝ + ĥ) − d̂) < −thr_i (or the same with lo above +thr_i), where ŝ is the f32
 * partial sum over the fixed axes, ĥ = fl32(hi) and thr_i ≥ e_i + δ_i (screenThresholds). With
 * S_i and δ_i = 2·(D+4)·u·(S_i + |d_i|) as there: |ŝ − s| ≤ γ_{D+3}·S_i (a sub-sum of the
 * screen's bound), |ĥ − hi| ≤ u·S_i, and the two f32 operations and the rounding of d_i add at
 * most u·(2·S_i + |d_i|) + u·|d_i| more, so |v̂ − (s + hi − d_i)| ≤ (D+8)·u·(S_i + |d_i|)·(1 + γ)
 * < δ_i for D ≥ 1 (the rest of δ_i covers the f64 evaluation, as in the screen). Hence
 * v̂ < −thr_i ⇒ s + hi − d_i < −e_i: every point below has r_i < −e_i and fails in f64 too.
 */
export function prunedBounds(p: GridSearchProblem, r: number): Float32Array {
  const out = new Float32Array(Math.max(2, 2 * (r + 1) * p.m)); // a binding is never empty
  const mins = p.axes.map((a) => a.reduce((m, v) => Math.min(m, v), Infinity));
  const maxs = p.axes.map((a) => a.reduce((m, v) => Math.max(m, v), -Infinity));
  for (let l = 0; l <= r; l++) {
    for (let i = 0; i < p.m; i++) {
      let lo = 0;
      let hi = 0;
      for (let j = p.d - r + l; j < p.d; j++) {
        const c = p.coefficients[i * p.d + j]!;
        const a = c * mins[j]!;
        const b = c * maxs[j]!;
        lo += Math.min(a, b);
        hi += Math.max(a, b);
      }
      out[2 * (l * p.m + i)] = lo;
      out[2 * (l * p.m + i) + 1] = hi;
    }
  }
  return out;
}

function shapeOf(p: GridSearchProblem, minInnerAxes: number): GridShape {
  // The prefix covers leading axes until at most 2^24 points remain per prefix (u32-safe decoding).
  let outer = 0;
  let inner = p.total;
  while (outer < p.d - minInnerAxes && inner > 2 ** 24) inner /= p.counts[outer++]!;
  return { d: p.d, m: p.m, counts: p.counts, outer, inner: Math.round(inner) };
}

type Kind = 'naive' | 'optimized' | 'pruned';

/**
 * A slice's nominees, recorded by the kernels as (prefix, offset in prefix) pairs in any order,
 * as grid point indices (prefix · inner + offset, exact: a grid has fewer than 2^53 points) in
 * grid order. A typed array sorts numbers natively, where a comparator sort of the pairs costs
 * more than the search on a fast GPU.
 */
export function nomineePoints(recs: Uint32Array, count: number, inner: number): Float64Array {
  const points = new Float64Array(count);
  for (let i = 0; i < count; i++) points[i] = recs[2 * i]! * inner + recs[2 * i + 1]!;
  return points.sort();
}

async function runGrid(gpu: GpuDevice, p: GridSearchProblem, ctx: OpContext<GridPoints>, kind: Kind): Promise<OpOutput<GridPoints>> {
  const { out, rechecked } = await searchGrid(gpu, p, ctx, kind);
  return { ...out, notes: [screenNote(rechecked, out.data.count)] };
}

const screenNote = (rechecked: number, passed: number): string => `f32 screen nominated ${rechecked} points; re-checked in f64, ${passed} pass`;

/**
 * Threads per millisecond the last slices of a search of this kind and shape ran at, per device:
 * the estimate counts every term and pruning skips most, so a search sized from the estimate
 * alone spends its first several slices (each a round trip) growing to SUBMIT_MS. A repeated
 * search, and each shard of a sharded one, starts at the learned size instead.
 */
const learnedRates = new WeakMap<GpuDevice, Map<string, number>>();

/** At most this many times the estimate's slice for a first slice from a learned rate: another search of the same shape may prune far less. */
const LEARNED_SLICE_CAP = 256;

/** The search on one device, and how many nominees the f32 screen handed to the f64 re-check. */
async function searchGrid(gpu: GpuDevice, p: GridSearchProblem, ctx: OpContext<GridPoints>, kind: Kind): Promise<{ out: OpOutput<GridPoints> & { readonly data: GridPoints }; rechecked: number }> {
  const sink = new PointSink(p.d, p.maxPoints);
  if (p.total === 0) return { out: { data: sink.finish(), kernelMs: 0, uploadMs: 0, readbackMs: 0 }, rechecked: 0 };
  const shape = shapeOf(p, 1);
  // Pruned: each thread walks the last r axes (all the inner ones when fewer remain).
  const r = Math.min(PRUNED_DEPTH, p.d - shape.outer);
  const program = kind === 'naive' ? gridNaive(shape) : kind === 'optimized' ? gridOptimized(shape) : gridPruned(shape, r);
  const perThread = kind === 'naive' ? 1 : kind === 'optimized' ? p.counts[p.d - 1]! : p.counts.slice(p.d - r).reduce((a, b) => a * b, 1);
  const threadsPerPrefix = shape.inner / perThread;
  const prefixes = Math.round(p.total / shape.inner);
  const threads = prefixes * threadsPerPrefix;
  // A submit runs about SUBMIT_MS of work, then the signal is checked: any thread count, even
  // part of one prefix (a dispatch starts `first` threads into prefix `prefixStart`).
  const threadsPerSubmit = Math.max(1, Math.floor(workPerSubmit(gpu, RATE) / (perThread * p.m * p.d)));
  const thr = screenThresholds(p);
  const axes = new Float32Array(p.counts.reduce((a, b) => a + b, 0));
  let o = 0;
  for (const a of p.axes) for (const v of a) axes[o++] = v;
  const coef = Float32Array.from(p.coefficients);
  const tgt = Float32Array.from(p.targets);
  let rechecked = 0;
  let kernelMs: number | undefined = 0;
  const recheck = new GridRecheck(p);
  const times = await gpu.exclusive(async () => {
    const pipeline = gpu.pipeline(program);
    const axesBuf = await gpu.upload(axes);
    const consts =
      kind === 'naive'
        ? [await gpu.upload(coef), await gpu.upload(tgt), await gpu.upload(thr)]
        : [gpu.uniform(new Float32Array([...vec4Array(coef), ...vec4Array(tgt), ...vec4Array(thr)]))];
    if (kind === 'pruned') consts.push(await gpu.upload(prunedBounds(p, r)));
    let cap = 1 << 16;
    let rates = learnedRates.get(gpu);
    if (rates === undefined) learnedRates.set(gpu, (rates = new Map()));
    const rateKey = `${kind} ${p.m} ${p.counts.join('x')}`;
    const learned = rates.get(rateKey);
    try {
      let perSubmit = learned === undefined ? threadsPerSubmit : Math.max(threadsPerSubmit, Math.min(threadsPerSubmit * LEARNED_SLICE_CAP, Math.floor(learned * SUBMIT_MS)));
      for (let s0 = 0; s0 < threads; ) {
        const s1 = Math.min(threads, s0 + perSubmit);
        const sliceStart = performance.now();
        for (;;) {
          // Pooled: the kernels append after the count word, so only that word is zeroed.
          const cand = gpu.storage((1 + 2 * cap) * 4);
          gpu.device.queue.writeBuffer(cand, 0, ZERO_COUNT);
          const temps: GPUBuffer[] = [];
          const dispatches: Dispatch[] = [];
          for (let a = s0; a < s1; a += DISPATCH_THREADS) {
            const n = Math.min(DISPATCH_THREADS, s1 - a);
            const prefix = Math.floor(a / threadsPerPrefix);
            const params = gpu.uniform(packParams([['u32', prefix], ['u32', n], ['u32', cap], ['u32', a - prefix * threadsPerPrefix]]));
            temps.push(params);
            const bindings = [axesBuf, ...consts, cand, params];
            dispatches.push({ pipeline, bindGroup: gpu.bind(pipeline, bindings), workgroups: grid1d(Math.ceil(n / 256), gpu.limits.workgroupsPerDimension) });
          }
          // Slices follow each other closely: one clock warm-up, before the first, keeps the clocks up.
          const head = await gpu.execute(dispatches, [{ buffer: cand, offset: 0, size: 4 }], ctx.timing, s0 === 0);
          const count = new Uint32Array(head.data[0]!)[0]!;
          if (count > cap) {
            // Too many nominees for the buffer: grow it to the exact count and run the slice again.
            gpu.release(cand, ...temps);
            if (count > 2 ** 26) throw new LimitExceededError('maxPoints', `the f32 screen nominated ${count} points in one slice; the result would be too large`);
            cap = count;
            continue;
          }
          kernelMs = addMs(kernelMs, head.kernelMs);
          const body = count === 0 ? [] : (await gpu.execute([], [{ buffer: cand, offset: 4, size: count * 8 }])).data;
          gpu.release(cand, ...temps);
          const points = nomineePoints(body.length === 0 ? new Uint32Array(0) : new Uint32Array(body[0]!), count, shape.inner);
          rechecked += count;
          if (!recheck.pushPassing(points, count, sink)) throw new LimitExceededError('maxPoints', `more than ${p.maxPoints} points pass; raise maxPoints or tighten the constraints`);
          break;
        }
        // The estimate counts every term; pruned and optimized kernels skip most of them, so the
        // next slice is sized from this one's time (at most 4× larger, 2× smaller per step).
        const took = performance.now() - sliceStart;
        // The fastest slice's rate, round trip included, so a start from it stays within SUBMIT_MS.
        if (took >= 1 && (s1 - s0) / took > (rates.get(rateKey) ?? 0)) rates.set(rateKey, (s1 - s0) / took);
        perSubmit = Math.max(1, Math.floor(perSubmit * Math.min(4, Math.max(0.5, SUBMIT_MS / Math.max(took, 0.05)))));
        s0 = s1;
        ctx.onProgress?.({ done: s1 * perThread, total: p.total, unit: 'points' });
        throwIfAborted(ctx.signal);
      }
    } finally {
      gpu.release(axesBuf, ...consts);
    }
    return callTimes(gpu, kernelMs);
  });
  return { out: { data: sink.finish(), ...times }, rechecked };
}

/**
 * The grid cut into about `target` sub-grids in lexicographic order: the axes before some axis k
 * fixed to one value each, axis k cut into contiguous ranges. Concatenating the sub-grids' passing
 * points in this order gives the whole grid's points in its lexicographic order.
 */
export function gridShards(p: GridSearchProblem, target: number): GridSearchProblem[] {
  let k = 0;
  let prefixes = 1;
  while (k < p.d - 1 && prefixes * p.counts[k]! < target) prefixes *= p.counts[k++]!;
  const ranges = Math.max(1, Math.min(p.counts[k]!, Math.ceil(target / prefixes)));
  const shards: GridSearchProblem[] = [];
  for (let pre = 0; pre < prefixes; pre++) {
    const fixed: number[] = [];
    for (let j = k - 1, r = pre; j >= 0; j--) {
      fixed[j] = r % p.counts[j]!;
      r = Math.floor(r / p.counts[j]!);
    }
    for (let i = 0; i < ranges; i++) {
      const a = Math.floor((i * p.counts[k]!) / ranges);
      const b = Math.floor(((i + 1) * p.counts[k]!) / ranges);
      const axes = p.axes.map((axis, j) => (j < k ? axis.subarray(fixed[j]!, fixed[j]! + 1) : j === k ? axis.subarray(a, b) : axis));
      const counts = axes.map((axis) => axis.length);
      // dims stay the caller's: the kernels read axes and counts only.
      shards.push({ ...p, axes, counts, total: counts.reduce((x, y) => x * y, 1) });
    }
  }
  return shards;
}

/** Sub-grids per device: each pays fixed costs (uploads, its first slices), so one per device; a lost device's goes to another. */
const GRID_SHARDS_PER_DEVICE = 1;

/** The grid search over several devices: sub-grids (gridShards) merged in order, byte-identical to one device's result. */
export function shardedGridSearchOp(devices: readonly GpuDevice[]): OpImplementation<'gridSearch'> {
  const run = async (p: GridSearchProblem, ctx: OpContext<GridPoints>, kind: Kind): Promise<OpOutput<GridPoints>> => {
    if (p.total === 0) return runGrid(devices[0]!, p, ctx, kind);
    const shards = gridShards(p, devices.length * GRID_SHARDS_PER_DEVICE);
    const progress = progressSum(shards.length, p.total, 'points', ctx.onProgress);
    const r = await runShards(devices, shards.length, ctx.signal, (gpu, i, signal) => searchGrid(gpu, shards[i]!, shardContext(ctx, undefined, signal, progress?.(i)), kind));
    const sink = new PointSink(p.d, p.maxPoints);
    let rechecked = 0;
    for (const s of r.results) {
      rechecked += s.rechecked;
      if (!sink.appendAll(s.out.data.points, s.out.data.count)) throw new LimitExceededError('maxPoints', `more than ${p.maxPoints} points pass; raise maxPoints or tighten the constraints`);
    }
    const outs = { ...r, results: r.results.map((s) => s.out) };
    const data = sink.finish();
    return { data, ...shardTimes(devices.length, outs), notes: [shardNote(devices.length, r), screenNote(rechecked, data.count)] };
  };
  return {
    defaultVariant: 'pruned',
    variants: {
      naive: (p, ctx) => run(p, ctx, 'naive'),
      optimized: (p, ctx) => run(p, ctx, 'optimized'),
      pruned: (p, ctx) => run(p, ctx, 'pruned'),
    },
  };
}

export function gridSearchOp(gpu: GpuDevice): OpImplementation<'gridSearch'> {
  return {
    // Pruned wins the full CS610 search by far and loses only on smaller grids that take
    // milliseconds either way (benchmarks/results/bench-seed-h100-2026-11-22.md).
    defaultVariant: 'pruned',
    variants: {
      naive: (p, ctx) => runGrid(gpu, p, ctx, 'naive'),
      optimized: (p, ctx) => runGrid(gpu, p, ctx, 'optimized'),
      pruned: (p, ctx) => runGrid(gpu, p, ctx, 'pruned'),
    },
  };
}
