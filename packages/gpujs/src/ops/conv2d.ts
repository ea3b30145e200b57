import type { OpImplementation } from '@kernelkit/ops';
import type { Runtime } from '../runtime.js';
import { copyResult, kernelFn, type KernelThis } from './kernel-util.js';

/**
 * One thread per output pixel of a band of rows; K, radius and the image size are compile-time
 * constants so the loops unroll. Pixels outside the image read as 0 (the bounds tests skip them).
 * The kernel sees only the band's input rows (plus halo): `inRow0` is the first image row of
 * that slice, `y0` the first output row.
 */
const conv2dKernel = kernelFn(function (this: KernelThis, inp: number[], f: number[], y0: number, inRow0: number) {
  const x = this.thread.x;
  const y = y0 + this.thread.y;
  let s = 0;
  for (let i = 0; i < this.constants.K!; i++) {
    const yy = y + i - this.constants.R!;
    if (yy >= 0 && yy < this.constants.H!) {
      for (let j = 0; j < this.constants.K!; j++) {
        const xx = x + j - this.constants.R!;
        if (xx >= 0 && xx < this.constants.W!) {
          s += inp[(yy - inRow0) * this.constants.W! + xx]! * f[i * this.constants.K! + j]!;
        }
      }
    }
  }
  return s;
});

export function conv2d(rt: Runtime): OpImplementation<'conv2d'> {
  return {
    defaultVariant: 'kernel',
    variants: {
      async kernel(p, ctx) {
        const { batch, height: H, width: W, k: K } = p;
        const R = (K - 1) / 2;
        const plane = H * W;
        const out = ctx.out ?? new Float32Array(batch * plane);
        const notes = new Set<string>();
        // Bands of rows so that a call's output and input both stay under the mode's cell limit.
        const bandRows = Math.max(1, Math.min(H, Math.floor(rt.maxCells / W) - 2 * R));
        const filter = p.filter;
        for (let b = 0; b < batch; b++) {
          for (let y0 = 0; y0 < H; y0 += bandRows) {
            const rows = Math.min(bandRows, H - y0);
            const r0 = Math.max(0, y0 - R);
            const r1 = Math.min(H, y0 + rows + R);
            const slice = p.input.subarray(b * plane + r0 * W, b * plane + r1 * W);
            const k = rt.kernel(`conv2d:${W}:${H}:${K}:${rows}`, conv2dKernel, { output: [W, rows], constants: { K, R, H, W } });
            const res = await rt.call(k, [slice, filter, y0, r0], notes);
            copyResult(res, out, b * plane + y0 * W);
          }
        }
        return { data: out, notes: [...notes] };
      },
    },
  };
}
