import { Pacer } from '@kernelkit/core';
import type { OpImplementation } from '@kernelkit/ops';
import type { Runtime } from '../runtime.js';
import { assertCallFits, callWork, copyResult, kernelFn, type KernelThis } from './kernel-util.js';

/**
 * One thread per output pixel of a band of rows; K, radius and the width are compile-time
 * constants so the loops unroll. The kernel sees only the band's input rows plus halo, clipped to
 * the image: `off` is the band's first output row within that slice and `rowsIn` the slice's row
 * count, so a row outside the slice is exactly a row outside the image and reads as 0 (the bounds
 * tests skip it), as does a column outside the image.
 * Every coordinate is slice-relative and the offsets are added as `x + (j - R)`: gpu.js does this
 * arithmetic in f32 (outside cpu mode), where absolute row numbers or `x + j` past 2^24 round
 * and read the wrong pixel. With the slice and the width within the mode's cell limit, the
 * values stay exact, or (columns past 2^24) round to at least 2^24 ≥ W and are still skipped.
 */
const conv2dKernel = kernelFn(function (this: KernelThis, inp: number[], f: number[], off: number, rowsIn: number) {
  const x = this.thread.x;
  const y = this.thread.y + off;
  let s = 0;
  for (let i = 0; i < this.constants.K!; i++) {
    const yy = y + (i - this.constants.R!);
    if (yy >= 0 && yy < rowsIn) {
      for (let j = 0; j < this.constants.K!; j++) {
        const xx = x + (j - this.constants.R!);
        if (xx >= 0 && xx < this.constants.W!) {
          s += inp[yy * this.constants.W! + xx]! * f[i * this.constants.K! + j]!;
        }
      }
    }
  }
  return s;
});

export function conv2d(rt: Runtime): OpImplementation<'conv2d'> {
  return {
    defaultVariant: 'kernel',
    check(p) {
      // The smallest call is one output row: its input slice is that row plus R halo rows on
      // each side, clipped to the image (min(H, K) rows of W); the filter goes to every call.
      const rowsIn = Math.min(p.height, p.k);
      assertCallFits(rt, 'input', rowsIn * p.width, `one output row and its halo (${rowsIn} input row${rowsIn === 1 ? '' : 's'} of ${p.width})`);
      assertCallFits(rt, 'filter', p.k * p.k, `the ${p.k}×${p.k} filter`);
    },
    variants: {
      async kernel(p, ctx) {
        const { batch, height: H, width: W, k: K } = p;
        const R = (K - 1) / 2;
        const plane = H * W;
        const out = ctx.out ?? new Float32Array(batch * plane);
        const notes = new Set<string>();
        // Bands of rows so that a call's output and input both stay under the mode's cell limit
        // (one row at least: `check` refused what one row cannot fit, except in cpu mode).
        // With a signal, also bounded by work per call (see callWork).
        const bandRows = Math.max(1, Math.min(H, Math.floor(rt.maxCells / W) - 2 * R, Math.floor(callWork(rt, ctx.signal) / (W * K * K))));
        const pacer = new Pacer(ctx.signal);
        const filter = p.filter;
        for (let b = 0; b < batch; b++) {
          for (let y0 = 0; y0 < H; y0 += bandRows) {
            const rows = Math.min(bandRows, H - y0);
            const r0 = Math.max(0, y0 - R);
            const r1 = Math.min(H, y0 + rows + R);
            const slice = p.input.subarray(b * plane + r0 * W, b * plane + r1 * W);
            const k = rt.kernel(`conv2d:${W}:${K}:${rows}`, conv2dKernel, { output: [W, rows], constants: { K, R, W } });
            const res = await rt.call(k, [slice, filter, y0 - r0, r1 - r0], notes);
            copyResult(res, out, b * plane + y0 * W);
            await pacer.tick();
          }
        }
        return { data: out, notes: [...notes] };
      },
    },
  };
}
