import type { OpImplementation } from '@kernelkit/ops';
import { allFinite, conv2dRows, conv2dRowsSimd } from '../kernels/conv2d.js';
import { Pacer } from '../wasm/pace.js';
import { withKernels, type WasmSupport } from '../wasm/runtime.js';

/** Multiply-adds per slice between abort checks (a few ms of the wasm kernel). */
const SLICE_MACS = 2 ** 24;

/** `simd`: the runtime's WebAssembly SIMD support; without it only the JavaScript kernel is offered. */
export function conv2dOp(simd: WasmSupport | undefined): OpImplementation<'conv2d'> {
  const direct: OpImplementation<'conv2d'>['variants'][string] = (p, ctx) => {
    const out = ctx.out ?? new Float32Array(p.batch * p.height * p.width);
    conv2dRows(p.input, p.filter, out, p.height, p.width, p.k, 0, p.batch * p.height, new Float64Array(p.width));
    return { data: out };
  };
  if (simd === undefined) return { defaultVariant: 'direct', variants: { direct } };
  return {
    defaultVariant: 'wasm-simd',
    variants: {
      'wasm-simd'(p, ctx) {
        if (!allFinite(p.filter)) {
          const res = direct(p, ctx) as { data: Float32Array };
          return { ...res, notes: ['the filter has NaN or Infinity, which the wasm kernel would spread over the zero padding: ran the direct (JavaScript) kernel'] };
        }
        const out = ctx.out ?? new Float32Array(p.batch * p.height * p.width);
        const rows = p.batch * p.height;
        const slice = Math.max(4, Math.ceil(SLICE_MACS / (p.width * p.k * p.k)));
        return withKernels(simd, async (w) => {
          const pacer = new Pacer(ctx.signal);
          for (let r0 = 0; r0 < rows; r0 += slice) {
            conv2dRowsSimd(w, p.input, p.filter, out, p.height, p.width, p.k, r0, Math.min(rows, r0 + slice));
            const wait = pacer.tick();
            if (wait !== undefined) await wait;
          }
          return { data: out };
        });
      },
      direct,
    },
  };
}
