import { assertIndices, type SampledValue } from '../common/sample.js';
import { allowedError, conv2dTolerance } from '../testing/tolerance.js';
import { conv2dOutputLength } from './shape.js';
import type { Conv2dProblem } from './types.js';

/** conv2dReference at single outputs (`[b][y][x]` flat indices), summed in the same order. */
export function conv2dSample(p: Conv2dProblem, indices: readonly number[]): SampledValue[] {
  assertIndices(indices, conv2dOutputLength(p));
  const { height: h, width: w, k, input, filter } = p;
  const r = (k - 1) / 2;
  const tol = conv2dTolerance(k);
  return indices.map((index) => {
    const b = Math.floor(index / (h * w));
    const y = Math.floor(index / w) % h;
    const x = index % w;
    let value = 0;
    let mag = 0;
    for (let i = -r; i <= r; i++) {
      for (let j = -r; j <= r; j++) {
        const yy = y + i;
        const xx = x + j;
        if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
        const t = input[(b * h + yy) * w + xx]! * filter[(i + r) * k + (j + r)]!;
        value += t;
        mag += Math.abs(t);
      }
    }
    return { index, value, bound: allowedError(tol, mag) };
  });
}
