import { convLayerPlanes, convLayerPlanesSimd, wasmSupport, withKernels } from '@kernelkit/cpu';
import { convLayerMultiplyAdds, type ConvLayerProblem, type OpContext, type OpImplementation, type OpOutput } from '@kernelkit/ops';
import { guidedBounds } from '../call.js';
import { copyTimes, INLINE_NOTE, inline, newCall, type Env } from './context.js';

/** Smallest block, in multiply-adds: see conv2d's `MIN_BAND_MACS`. */
const MIN_BLOCK_MACS = 2 ** 20;

/**
 * Blocks of output planes over the flattened (batch·maps) space, largest first, claimed like
 * conv2d's bands by one task per thread. Blocks are whole images when there are enough of them (a block
 * that splits an image copies that image into module memory twice); otherwise consecutive planes
 * share an image, so a block reads one or two images and the weights. The input is staged image
 * by image after the tasks are queued, ahead of the blocks that need it; each block writes its
 * planes to the shared output, and a small result is copied out block by block as blocks finish.
 * `wasm-simd` (the default where the runtime has WebAssembly
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
    const out = call.output(Float32Array, planes * planeLen, ctx.out, undefined, true);
    const image = p.channels * p.height * p.width;
    const dims = { channels: p.channels, height: p.height, width: p.width, maps: p.maps, k: p.k, outHeight: p.outHeight, outWidth: p.outWidth };
    const threads = env.pool.threads;
    const byImage = p.batch >= 4 * threads;
    const least = (n: number) => Math.ceil(MIN_BLOCK_MACS / (work / n));
    const units = call.units(byImage ? guidedBounds(p.batch, threads, least(p.batch)).map((img) => img * p.maps) : guidedBounds(planes, threads, least(planes)));
    const b = units.bounds;
    const task = { kind: 'convLayer', input: input.ref, weights: weights.ref, bias: bias?.ref, relu: p.relu, out: out.ref, dims, bounds: b, ctrl: units.ctrl, simd: useSimd } as const;
    await units.run(
      task,
      env.pool.threads,
      (u) => input.ensure((Math.floor((b[u + 1]! - 1) / p.maps) + 1) * image),
      out.byParts ? (u) => out.copyPart(b[u]! * planeLen, b[u + 1]! * planeLen) : undefined,
    );
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
