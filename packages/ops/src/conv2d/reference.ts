import type { Conv2dProblem } from './types.js';

/**
 * The f64 definition of conv2d (correlation, zero ghost cells), written for clarity, not speed.
 * `abs: true` evaluates Σ|in·f| instead, which the conformance suite uses to bound rounding error.
 */
export function conv2dReference(p: Conv2dProblem, abs = false): Float64Array {
  const { batch, height: h, width: w, k, input, filter } = p;
  const r = (k - 1) / 2;
  const out = new Float64Array(batch * h * w);
  for (let b = 0; b < batch; b++) {
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        let s = 0;
        for (let i = -r; i <= r; i++) {
          for (let j = -r; j <= r; j++) {
            const yy = y + i;
            const xx = x + j;
            if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
            const t = input[(b * h + yy) * w + xx]! * filter[(i + r) * k + (j + r)]!;
            s += abs ? Math.abs(t) : t;
          }
        }
        out[(b * h + y) * w + x] = s;
      }
    }
  }
  return out;
}
