import { LimitExceededError, Pacer } from '@kernelkit/core';
import { PointSink, type GridSearchProblem, type OpContext, type OpImplementation, type OpOutput } from '@kernelkit/ops';
import type { GridPoints } from '@kernelkit/ops';
import { gridNaiveRange, gridPrunedRange, GridSearchSimd, prefixCount, type PointCallback } from '../kernels/grid-search.js';
import { forSlices } from '../wasm/pace.js';
import { withKernels, type WasmSupport } from '../wasm/runtime.js';


/** Prefix dimensions per slice: enough slices for smooth progress and prompt abort. */
export function outerDims(p: GridSearchProblem, minSlices: number): number {
  let outer = 1;
  while (outer < p.d - 1 && prefixCount(p, outer) < minSlices) outer++;
  return Math.min(outer, p.d);
}

export function limitError(p: GridSearchProblem): LimitExceededError {
  return new LimitExceededError('maxPoints', `more than ${p.maxPoints} points pass; raise maxPoints or tighten the constraints`);
}

/** Grid points per slice between abort checks (a few ms of the naive kernel; the pruned one skips most). */
const SLICE_POINTS = 2 ** 20;

/** A range kernel: the points of prefixes [start, end) (and of [lastLo, lastHi) of the last axis) to `emit`, false when it asked to stop. */
type RangeKernel = (p: GridSearchProblem, outer: number, start: number, end: number, emit: PointCallback, lastLo?: number, lastHi?: number) => boolean;

/**
 * Runs the search one slice of about SLICE_POINTS points at a time, pacing between slices so
 * that `signal` can cancel a long run and `onProgress` can report it. A slice is a run of
 * prefixes (the first `outer` dimensions), or, when the last axis alone is longer than a
 * slice, one prefix and a run of the last axis.
 */
function sliced(kernel: RangeKernel) {
  return async (p: GridSearchProblem, ctx: OpContext<GridPoints>): Promise<OpOutput<GridPoints>> => {
    const sink = new PointSink(p.d, p.maxPoints);
    if (p.total === 0) return { data: sink.finish() };
    const emit = (x: Float64Array) => sink.push(x);
    const last = p.counts[p.d - 1]!;
    let outer = p.d - 1;
    let pointsPerPrefix = last;
    while (outer > 0 && pointsPerPrefix * p.counts[outer - 1]! <= SLICE_POINTS) pointsPerPrefix *= p.counts[--outer]!;
    const prefixes = prefixCount(p, outer);
    // Units: prefixes, or (prefix, run of the last axis) pairs when the last axis is longer than a slice.
    const runs = Math.ceil(last / SLICE_POINTS);
    const perSlice = runs > 1 ? 1 : Math.max(1, Math.floor(SLICE_POINTS / pointsPerPrefix));
    const units = prefixes * runs;
    const slices = Math.ceil(units / perSlice);
    let done = 0;
    await forSlices(ctx.signal, units, perSlice, (u0, u1) => {
      const ok =
        runs > 1
          ? kernel(p, outer, Math.floor(u0 / runs), Math.floor(u0 / runs) + 1, emit, (u0 % runs) * SLICE_POINTS, (u0 % runs) * SLICE_POINTS + SLICE_POINTS)
          : kernel(p, outer, u0, u1, emit);
      if (!ok) throw limitError(p);
      ctx.onProgress?.({ done: ++done, total: slices, unit: 'slices' });
    });
    return { data: sink.finish() };
  };
}

/** Work per step of the WebAssembly search between abort checks: nodes of the search tree and last-axis candidates (a few ms). */
const STEP_BUDGET = 2 ** 17;

/**
 * The whole grid as one pruned search on the WebAssembly SIMD kernels (pruning from the first
 * axis on, where slices of prefixes would each start below their prefix), in steps of
 * STEP_BUDGET with pacing between them; progress in grid points passed.
 */
function searchSimd(simd: WasmSupport) {
  return (p: GridSearchProblem, ctx: OpContext<GridPoints>): Promise<OpOutput<GridPoints>> =>
    withKernels(simd, async (w) => {
      const sink = new PointSink(p.d, p.maxPoints);
      if (p.total === 0) return { data: sink.finish() };
      const search = new GridSearchSimd(w, p, 0, 0, 1);
      const pacer = new Pacer(ctx.signal);
      const emit = (x: Float64Array): boolean => sink.push(x);
      while (!search.done) {
        if (!search.run(emit, STEP_BUDGET)) throw limitError(p);
        ctx.onProgress?.({ done: search.covered(), total: p.total, unit: 'points' });
        const wait = pacer.tick();
        if (wait !== undefined) await wait;
      }
      return { data: sink.finish() };
    });
}

/** `simd`: the runtime's WebAssembly SIMD support; without it only the JavaScript kernels are offered. */
export function gridSearchOp(simd: WasmSupport | undefined): OpImplementation<'gridSearch'> {
  const js = { pruned: sliced(gridPrunedRange), naive: sliced(gridNaiveRange) };
  if (simd === undefined) return { defaultVariant: 'pruned', variants: js };
  return { defaultVariant: 'wasm-simd', variants: { 'wasm-simd': searchSimd(simd), ...js } };
}
