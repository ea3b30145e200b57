import { conv2dMultiplyAdds, conv2dOutputLength, type OpImplementation } from '@kernelkit/ops';
import { allFinite, conv2dRows, conv2dRowsSimd } from '../kernels/conv2d.js';
import { forSlices } from '../wasm/pace.js';
import { withKernels, type WasmSupport } from '../wasm/runtime.js';
import type { NewOutput } from '../outputs.js';

/** Multiply-adds per slice between abort checks (a few ms of the wasm kernel). */
const SLICE_MACS = 2 ** 24;
/** The same for the JavaScript kernel, a few times slower per multiply-add. */
const SLICE_MACS_JS = 2 ** 22;

/** Rows of one image per slice so that a slice is about `macs` multiply-adds (a few rows at least). */
const sliceRows = (p: Parameters<typeof conv2dMultiplyAdds>[0], macs: number, least: number): number =>
  Math.max(least, Math.ceil(macs / conv2dMultiplyAdds({ ...p, batch: 1, height: 1 })));

/** `simd`: the runtime's WebAssembly SIMD support; without it only the JavaScript kernel is offered. `newOutput`: result arrays. */
export function conv2dOp(simd: WasmSupport | undefined, newOutput: NewOutput): OpImplementation<'conv2d'> {
  const direct: OpImplementation<'conv2d'>['variants'][string] = async (p, ctx) => {
    const out = ctx.out ?? (await newOutput(Float32Array, conv2dOutputLength(p)));
    const acc = new Float64Array(p.width);
    await forSlices(ctx.signal, p.batch * p.height, sliceRows(p, SLICE_MACS_JS, 1), (r0, r1) => conv2dRows(p.input, p.filter, out, p.height, p.width, p.k, r0, r1, acc));
    return { data: out };
  };
  if (simd === undefined) return { defaultVariant: 'direct', variants: { direct } };
  return {
    defaultVariant: 'wasm-simd',
    variants: {
      async 'wasm-simd'(p, ctx) {
        if (!allFinite(p.filter)) {
          const res = await direct(p, ctx);
          return { ...res, notes: ['the filter has NaN or Infinity, which the wasm kernel would spread over the zero padding: ran the direct (JavaScript) kernel'] };
        }
        const out = ctx.out ?? (await newOutput(Float32Array, conv2dOutputLength(p)));
        const rows = p.batch * p.height;
        const slice = sliceRows(p, SLICE_MACS, 4);
        return withKernels(simd, async (w) => {
          await forSlices(ctx.signal, rows, slice, (r0, r1) => conv2dRowsSimd(w, p.input, p.filter, out, p.height, p.width, p.k, r0, r1));
          return { data: out };
        });
      },
      direct,
    },
  };
}
