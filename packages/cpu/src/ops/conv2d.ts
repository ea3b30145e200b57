import { conv2dMultiplyAdds, conv2dOutputLength, type OpImplementation } from '@kernelkit/ops';
import { allFinite, conv2dRows, conv2dRowsSimd } from '../kernels/conv2d.js';
import { forSlices } from '../wasm/pace.js';
import { withKernels, type WasmSupport } from '../wasm/runtime.js';

/** Multiply-adds per slice between abort checks (a few ms of the wasm kernel). */
const SLICE_MACS = 2 ** 24;

/** `simd`: the runtime's WebAssembly SIMD support; without it only the JavaScript kernel is offered. */
export function conv2dOp(simd: WasmSupport | undefined): OpImplementation<'conv2d'> {
  const direct: OpImplementation<'conv2d'>['variants'][string] = (p, ctx) => {
    const out = ctx.out ?? new Float32Array(conv2dOutputLength(p));
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
        const out = ctx.out ?? new Float32Array(conv2dOutputLength(p));
        const rows = p.batch * p.height;
        const slice = Math.max(4, Math.ceil(SLICE_MACS / conv2dMultiplyAdds({ ...p, batch: 1, height: 1 })));
        return withKernels(simd, async (w) => {
          await forSlices(ctx.signal, rows, slice, (r0, r1) => conv2dRowsSimd(w, p.input, p.filter, out, p.height, p.width, p.k, r0, r1));
          return { data: out };
        });
      },
      direct,
    },
  };
}
