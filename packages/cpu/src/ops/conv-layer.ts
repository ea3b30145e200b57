import { convLayerMultiplyAdds, convLayerOutputLength, type OpImplementation } from '@kernelkit/ops';
import { convLayerPlanes, convLayerPlanesSimd } from '../kernels/conv-layer.js';
import { forSlices } from '../wasm/pace.js';
import { withKernels, type WasmSupport } from '../wasm/runtime.js';
import type { NewOutput } from '../outputs.js';

/** Multiply-adds per slice between abort checks (a few ms of the wasm kernel). */
const SLICE_MACS = 2 ** 24;
/** The same for the JavaScript kernel, a few times slower per multiply-add. */
const SLICE_MACS_JS = 2 ** 22;

/** `simd`: the runtime's WebAssembly SIMD support; without it only the JavaScript kernel is offered. `newOutput`: result arrays. */
export function convLayerOp(simd: WasmSupport | undefined, newOutput: NewOutput): OpImplementation<'convLayer'> {
  const direct: OpImplementation<'convLayer'>['variants'][string] = async (p, ctx) => {
    const out = ctx.out ?? (await newOutput(Float32Array, convLayerOutputLength(p)));
    const acc = new Float64Array(p.outHeight * p.outWidth);
    const slice = Math.max(1, Math.floor(SLICE_MACS_JS / convLayerMultiplyAdds({ ...p, batch: 1, maps: 1 })));
    await forSlices(ctx.signal, p.batch * p.maps, slice, (q0, q1) => convLayerPlanes(p.input, p.weights, p.bias, p.relu, out, p, q0, q1, acc));
    return { data: out };
  };
  if (simd === undefined) return { defaultVariant: 'direct', variants: { direct } };
  return {
    defaultVariant: 'wasm-simd',
    variants: {
      async 'wasm-simd'(p, ctx) {
        const planes = p.batch * p.maps;
        const out = ctx.out ?? (await newOutput(Float32Array, convLayerOutputLength(p)));
        // Whole images per slice where they are small (a partial image repacks the weights),
        // else groups of four maps (the kernel's register tile) of one image.
        const perImage = convLayerMultiplyAdds({ ...p, batch: 1 });
        const slice =
          perImage <= SLICE_MACS
            ? Math.floor(SLICE_MACS / perImage) * p.maps
            : Math.min(p.maps, Math.max(4, Math.floor((SLICE_MACS * p.maps) / perImage / 4) * 4));
        return withKernels(simd, async (w) => {
          await forSlices(ctx.signal, planes, slice, (q0, q1) => convLayerPlanesSimd(w, p.input, p.weights, p.bias, p.relu, out, p, q0, q1));
          return { data: out };
        });
      },
      direct,
    },
  };
}
