import { Pacer } from '@kernelkit/core';
import type { OpImplementation } from '@kernelkit/ops';
import type { Runtime } from '../runtime.js';
import { assertCallFits, callWork, copyResult, kernelFn, type KernelThis } from './kernel-util.js';

/**
 * 3-D output kernel [OW, OH, batch·M] over a chunk of the batch: thread (x, y, z) computes
 * out[b][m][y][x] with z = b·M + m. z is split into (b, m) with an f32 division and an exact
 * ±1 fix-up (z < chunk·M ≤ the cell limit ≤ 2^24: the quotient's error is below 1 and b·M stays
 * exact). C, K and the sizes are constants.
 * Bias and ReLU are fused when asked (ReLU keeps NaN, as the reference does). A call may cover
 * output rows [y0, y0 + output height) only, so that one large image can be split.
 */
const convLayerKernel = kernelFn(function (this: KernelThis, inp: number[], wt: number[], bias: number[], y0: number) {
  const x = this.thread.x;
  const y = this.thread.y + y0;
  const z = this.thread.z + 0.0;
  const M = this.constants.M!;
  let b = Math.floor((z + 0.5) / M);
  let m = z - b * M;
  if (m < 0) {
    b = b - 1;
    m = m + M;
  }
  if (m >= M) {
    b = b + 1;
    m = m - M;
  }
  const C = this.constants.C!;
  const K = this.constants.K!;
  const H = this.constants.H!;
  const W = this.constants.W!;
  let s = 0;
  for (let c = 0; c < this.constants.C!; c++) {
    const inBase = (b * C + c) * H;
    const wBase = (m * C + c) * K;
    for (let p = 0; p < this.constants.K!; p++) {
      for (let q = 0; q < this.constants.K!; q++) {
        s += inp[(inBase + y + p) * W + x + q]! * wt[(wBase + p) * K + q]!;
      }
    }
  }
  if (this.constants.BIAS === 1) s = s + bias[m]!;
  if (this.constants.RELU === 1 && s < 0) s = 0;
  return s;
});

export function convLayer(rt: Runtime): OpImplementation<'convLayer'> {
  return {
    defaultVariant: 'kernel',
    check(p) {
      // The smallest call is one image: its C·H·W input cells and M·OH·OW output cells (the
      // output follows from the input's size, so both are the input's). Every call reads all
      // M·C·K·K weights.
      const inImage = p.channels * p.height * p.width;
      const outImage = p.maps * p.outHeight * p.outWidth;
      assertCallFits(rt, 'input', Math.max(inImage, outImage), `one image (${inImage} input cells, ${outImage} output cells)`);
      assertCallFits(rt, 'weights', p.maps * p.channels * p.k * p.k, `the ${p.maps}×${p.channels}×${p.k}×${p.k} weights`);
    },
    variants: {
      async kernel(p, ctx) {
        const { batch, channels: C, height: H, width: W, maps: M, k: K, outHeight: OH, outWidth: OW } = p;
        const outImage = M * OH * OW;
        const inImage = C * H * W;
        const out = ctx.out ?? new Float32Array(batch * outImage);
        const notes = new Set<string>();
        // Images per call: output and input of a call both under the mode's cell limit (one
        // image at least: `check` refused what one image cannot fit, except in cpu mode).
        // With a signal, also bounded by work per call (see callWork): whole
        // images while one fits, else bands of output rows of one image.
        const work = callWork(rt, ctx.signal);
        const rowMacs = OW * M * C * K * K;
        const imagesPerCall = Math.max(1, Math.min(batch, Math.floor(rt.maxCells / Math.max(outImage, inImage)), Math.floor(work / (rowMacs * OH))));
        const rowsPerCall = Math.max(1, Math.min(OH, Math.floor(work / rowMacs)));
        const bias = p.bias ?? new Float32Array(1);
        const pacer = new Pacer(ctx.signal);
        for (let b0 = 0; b0 < batch; b0 += imagesPerCall) {
          const nb = Math.min(imagesPerCall, batch - b0);
          for (let y0 = 0; y0 < OH; y0 += rowsPerCall) {
            const rows = Math.min(rowsPerCall, OH - y0);
            const k = rt.kernel(`convlayer:${C}:${H}:${W}:${M}:${K}:${nb}:${rows}:${p.bias !== undefined}:${p.relu}`, convLayerKernel, {
              output: [OW, rows, nb * M],
              constants: { C, K, H, W, M, BIAS: p.bias !== undefined ? 1 : 0, RELU: p.relu ? 1 : 0 },
            });
            const res = await rt.call(k, [p.input.subarray(b0 * inImage, (b0 + nb) * inImage), p.weights, bias, y0], notes);
            if (rows === OH) copyResult(res, out, b0 * outImage);
            // A band of rows: each output plane's rows go to their place in that plane.
            else (res as readonly unknown[]).forEach((planeRows, z) => copyResult(planeRows, out, (b0 * M + z) * OH * OW + y0 * OW));
            await pacer.tick();
          }
        }
        return { data: out, notes: [...notes] };
      },
    },
  };
}
