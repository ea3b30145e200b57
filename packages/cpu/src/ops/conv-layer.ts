import { convLayerMultiplyAdds, convLayerOutputLength, type OpImplementation } from '@kernelkit/ops';
import { convLayerPlanes, convLayerPlanesSimd } from '../kernels/conv-layer.js';
import { forSlices } from '../wasm/pace.js';
import { withKernels, type WasmSupport } from '../wasm/runtime.js';

/** Multiply-adds per slice between abort checks (a few ms of the wasm kernel). */
const SLICE_MACS = 2 ** 24;

/** `simd`: the runtime's WebAssembly SIMD support; without it only the JavaScript kernel is offered. */
export function convLayerOp(simd: WasmSupport | undefined): OpImplementation<'convLayer'> {
  const direct: OpImplementation<'convLayer'>['variants'][string] = (p, ctx) => {
    const out = ctx.out ?? new Float32Array(convLayerOutputLength(p));
    convLayerPlanes(p.input, p.weights, p.bias, p.relu, out, p, 0, p.batch * p.maps, new Float64Array(p.outHeight * p.outWidth));
    return { data: out };
  };
  if (simd === undefined) return { defaultVariant: 'direct', variants: { direct } };
  return {
    defaultVariant: 'wasm-simd',
    variants: {
      'wasm-simd'(p, ctx) {
        const planes = p.batch * p.maps;
        const out = ctx.out ?? new Float32Array(convLayerOutputLength(p));
        // Whole images per slice where possible: a partial image repacks the weights.
        const slice = Math.max(1, Math.floor(SLICE_MACS / convLayerMultiplyAdds({ ...p, batch: 1 }))) * p.maps;
        return withKernels(simd, async (w) => {
          await forSlices(ctx.signal, planes, slice, (q0, q1) => convLayerPlanesSimd(w, p.input, p.weights, p.bias, p.relu, out, p, q0, q1));
          return { data: out };
        });
      },
      direct,
    },
  };
}
