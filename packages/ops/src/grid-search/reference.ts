import { LimitExceededError } from '@kernelkit/core';
import { gridPointPasses, PointSink } from './shape.js';
import type { GridPoints, GridSearchProblem } from './types.js';

/** Brute force over every point with an odometer, x1 slowest. Clear, not fast. */
export function gridSearchReference(p: GridSearchProblem): GridPoints {
  const sink = new PointSink(p.d, p.maxPoints);
  if (p.total === 0) return sink.finish();
  const r = new Array<number>(p.d).fill(0);
  // Read once: `axes` is a lazy getter, too slow to call per point.
  const axes = p.axes;
  const x = axes.map((a) => a[0]!);
  for (;;) {
    if (gridPointPasses(p, x) && !sink.push(x)) {
      throw new LimitExceededError('maxPoints', `more than ${p.maxPoints} points pass; raise maxPoints or tighten the constraints`);
    }
    let j = p.d - 1;
    while (j >= 0) {
      r[j]!++;
      if (r[j]! < p.counts[j]!) {
        x[j] = axes[j]![r[j]!]!;
        break;
      }
      r[j] = 0;
      x[j] = axes[j]![0]!;
      j--;
    }
    if (j < 0) return sink.finish();
  }
}
