import { AbortError, LimitExceededError } from '@kernelkit/core';
import { PointSink, type GridSearchProblem, type OpContext, type OpImplementation, type OpOutput } from '@kernelkit/ops';
import type { GridPoints } from '@kernelkit/ops';
import { gridNaiveRange, gridPrunedRange, prefixCount } from '../kernels/grid-search.js';

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Prefix dimensions per slice: enough slices for smooth progress and prompt abort. */
export function outerDims(p: GridSearchProblem, minSlices: number): number {
  let outer = 1;
  while (outer < p.d - 1 && prefixCount(p, outer) < minSlices) outer++;
  return Math.min(outer, p.d);
}

export function limitError(p: GridSearchProblem): LimitExceededError {
  return new LimitExceededError('maxPoints', `more than ${p.maxPoints} points pass; raise maxPoints or tighten the constraints`);
}

/**
 * Runs the search one slice of prefixes at a time, yielding to the event loop between slices
 * so that `signal` can cancel a long run and `onProgress` can report it.
 */
function sliced(kernel: typeof gridNaiveRange) {
  return async (p: GridSearchProblem, ctx: OpContext<GridPoints>): Promise<OpOutput<GridPoints>> => {
    const sink = new PointSink(p.d, p.maxPoints);
    if (p.total === 0) return { data: sink.finish() };
    const outer = outerDims(p, 64);
    const slices = prefixCount(p, outer);
    const emit = (x: Float64Array) => sink.push(x);
    let lastYield = performance.now();
    for (let s = 0; s < slices; s++) {
      if (!kernel(p, outer, s, s + 1, emit)) throw limitError(p);
      ctx.onProgress?.({ done: s + 1, total: slices, unit: 'slices' });
      if (performance.now() - lastYield > 50) {
        await yieldToEventLoop();
        lastYield = performance.now();
        if (ctx.signal?.aborted) throw new AbortError(ctx.signal.reason);
      }
    }
    return { data: sink.finish() };
  };
}

export const gridSearch: OpImplementation<'gridSearch'> = {
  defaultVariant: 'pruned',
  variants: {
    pruned: sliced(gridPrunedRange),
    naive: sliced(gridNaiveRange),
  },
};
