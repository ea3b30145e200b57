import { convLayerPlanes, convLayerPlanesSimd, wasmSupport, withKernels } from '@kernelkit/cpu';
import { convLayerMultiplyAdds, type ConvLayerProblem, type OpContext, type OpImplementation, type OpOutput } from '@kernelkit/ops';
import { split, taskCount } from '../call.js';
import { copyTimes, INLINE_NOTE, inline, newCall, type Env } from './context.js';

const MIN_TASK_MACS = 2 ** 17;

/** Blocks of equal work: see conv2d's `BANDS_PER_THREAD`. */
const BLOCKS_PER_THREAD = 2;

/**
 * Blocks of output planes over the flattened (batch·maps) space, `BLOCKS_PER_THREAD` per thread;
 * consecutive planes share an input image, so a block reads one or two images and the weights.
 * The input is staged image by image ahead of the blocks that need it; each block writes its
 * planes of the result directly. `wasm-simd` (the default where the runtime has WebAssembly
 * SIMD) runs the blocks on the WebAssembly kernel, which each worker instantiates once and which
 * copies whole images into its memory and the planes back out; `planes` runs the JavaScript one.
 */
export function convLayerOp(env: Env): OpImplementation<'convLayer'> {
  const s = wasmSupport();
  const simd = 'module' in s ? s : undefined;
  const blocks = async (p: ConvLayerProblem, ctx: OpContext<Float32Array>, useSimd: boolean): Promise<OpOutput<Float32Array>> => {
    const planes = p.batch * p.maps;
    const planeLen = p.outHeight * p.outWidth;
    const work = convLayerMultiplyAdds(p);
    if (inline(env, 'convLayer', work)) {
      const out = ctx.out ?? new Float32Array(planes * planeLen);
      if (useSimd && simd !== undefined) withKernels(simd, (w) => convLayerPlanesSimd(w, p.input, p.weights, p.bias, p.relu, out, p, 0, planes));
      else convLayerPlanes(p.input, p.weights, p.bias, p.relu, out, p, 0, planes, new Float64Array(planeLen));
      return { data: out, notes: [INLINE_NOTE] };
    }
    const call = newCall(env, 'convLayer', ctx.signal);
    const input = call.input(p.input);
    const weights = call.input(p.weights).all();
    const bias = p.bias === undefined ? undefined : call.input(p.bias).all();
    const out = call.output(Float32Array, planes * planeLen, ctx.out);
    const image = p.channels * p.height * p.width;
    const dims = { channels: p.channels, height: p.height, width: p.width, maps: p.maps, k: p.k, outHeight: p.outHeight, outWidth: p.outWidth };
    for (const [q0, q1] of split(planes, taskCount(planes, work, env.pool.threads, BLOCKS_PER_THREAD, MIN_TASK_MACS))) {
      input.ensure((Math.floor((q1 - 1) / p.maps) + 1) * image);
      call.submit(
        { kind: 'convLayer', input: input.ref, weights: weights.ref, bias: bias?.ref, relu: p.relu, out: out.ref, dims, planeStart: q0, planeEnd: q1, simd: useSimd },
      );
    }
    await call.finish(() => out.complete());
    return { data: out.result(), ...copyTimes(call, ctx.timing) };
  };
  const planesVariant: OpImplementation<'convLayer'>['variants'][string] = (p, ctx) => blocks(p, ctx, false);
  if (simd === undefined) return { defaultVariant: 'planes', variants: { planes: planesVariant } };
  return {
    defaultVariant: 'wasm-simd',
    variants: { 'wasm-simd': (p, ctx) => blocks(p, ctx, true), planes: planesVariant },
  };
}
