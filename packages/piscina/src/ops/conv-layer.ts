import { now } from '@kernelkit/core';
import { convLayerPlanes, convLayerPlanesSimd, packedLength, packWeights, SHARED_MEMORY_MAX_BYTES, wasmSupport, withKernels } from '@kernelkit/cpu';
import { convLayerMultiplyAdds, type ConvLayerProblem, type OpContext, type OpImplementation, type OpOutput } from '@kernelkit/ops';
import { guidedBounds, type Call } from '../call.js';
import { callerShares, convLayerShare } from '../caller-share.js';
import { copyTimes, INLINE_NOTE, inline, moduleMemory, moduleOutput, newCall, type Env } from './context.js';

/** Smallest block, in multiply-adds: see conv2d's `MIN_BAND_MACS`. */
const MIN_BLOCK_MACS = 2 ** 20;

/**
 * Blocks of output planes over the flattened (batch·maps) space, largest first, claimed like
 * conv2d's bands by one task per thread. Blocks are whole images when there are enough of them (a block
 * that splits an image copies that image into module memory twice); otherwise consecutive planes
 * share an image, so a block reads one or two images and the weights. The input is staged image
 * by image after the tasks are queued, ahead of the blocks that need it; each block writes its
 * planes to the shared output.
 * `wasm-simd` (the default where the runtime has WebAssembly SIMD) runs the blocks on the
 * WebAssembly kernel: for an ordinary input in place in one shared module memory
 * (`inModuleMemory`), for a shared one in each worker's own instance, which copies whole images
 * into its memory and the planes back out; `planes` runs the JavaScript one.
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
    const threads = env.pool.threads;
    const byImage = p.batch >= 4 * threads;
    const least = (n: number) => Math.ceil(MIN_BLOCK_MACS / (work / n));
    // A shared input stays where it is: the workers copy their parts into their own memories in
    // parallel, where this path would copy all of it on this thread.
    if (useSimd && env.pool.sharedModule !== undefined && !(p.input.buffer instanceof SharedArrayBuffer)) {
      const layout = moduleLayout(p);
      if (layout.bytes <= SHARED_MEMORY_MAX_BYTES) {
        // Blocks start at multiples of 4 maps (where the packed weights of the following maps begin).
        const groups = Math.ceil(p.maps / 4);
        const planeOf = (g: number) => Math.floor(g / groups) * p.maps + Math.min(p.maps, (g % groups) * 4);
        const bounds = byImage ? guidedBounds(p.batch, threads, least(p.batch)).map((img) => img * p.maps) : guidedBounds(p.batch * groups, threads, least(p.batch * groups)).map(planeOf);
        return inModuleMemory(env, call, call.units(bounds), layout, p, ctx, work);
      }
    }
    const input = call.input(p.input);
    const weights = call.input(p.weights).all();
    const bias = p.bias === undefined ? undefined : call.input(p.bias).all();
    const out = call.output(Float32Array, planes * planeLen, ctx.out);
    const image = p.channels * p.height * p.width;
    const dims = dimsOf(p);
    const units = call.units(byImage ? guidedBounds(p.batch, threads, least(p.batch)).map((img) => img * p.maps) : guidedBounds(planes, threads, least(planes)));
    const b = units.bounds;
    const task = { kind: 'convLayer', input: input.ref, weights: weights.ref, bias: bias?.ref, relu: p.relu, out: out.ref, dims, bounds: b, ctrl: units.ctrl, simd: useSimd } as const;
    units.run(
      task,
      env.pool.threads,
      (u) => input.ensure((Math.floor((b[u + 1]! - 1) / p.maps) + 1) * image),
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

const dimsOf = (p: ConvLayerProblem) => ({ channels: p.channels, height: p.height, width: p.width, maps: p.maps, k: p.k, outHeight: p.outHeight, outWidth: p.outWidth });

/**
 * Where a call's data sits in a shared module memory (float offsets): the packed weights, the
 * bias, the images, zeros the last row's tile reads past the end, the output planes.
 */
interface ModuleLayout {
  readonly weightsAt: number;
  readonly biasAt: number;
  readonly inputAt: number;
  readonly outAt: number;
  readonly bytes: number;
}

function moduleLayout(p: ConvLayerProblem): ModuleLayout {
  const biasAt = packedLength(p.maps, p.channels, p.k);
  const biasLen = Math.ceil(p.maps / 4) * 4 + 4;
  // V8 copies between ordinary memory and a shared one several times slower when the two
  // addresses differ by 4 mod 8 bytes: the images start one float later where that lines them up.
  const inputAt = biasAt + biasLen + ((biasAt + biasLen - p.input.byteOffset / 4) & 1);
  const slack = 8 + p.k;
  const outAt = (inputAt + p.input.length + slack + 1) & ~1;
  return { weightsAt: 0, biasAt, inputAt, outAt, bytes: (outAt + p.batch * p.maps * p.outHeight * p.outWidth) * 4 };
}

/**
 * The shared-memory path: this thread packs the weights and copies the images straight into the
 * memory the workers' kernels run on, image by image after the tasks are queued. Without an `out`
 * the result is the planes where the kernels wrote them (`moduleOutput`); with a shared `out` each
 * worker copies its finished planes into it, and so does this thread for the units it claims when
 * it takes a share (`callerShares`); a caller's ordinary `out` is filled from the module memory in
 * one copy on this thread once every task has succeeded.
 */
async function inModuleMemory(env: Env, call: Call, units: ReturnType<Call['units']>, l: ModuleLayout, p: ConvLayerProblem, ctx: OpContext<Float32Array>, work: number): Promise<OpOutput<Float32Array>> {
  const planeLen = p.outHeight * p.outWidth;
  const n = p.batch * p.maps * planeLen;
  const { memory: mem, forCaller } = moduleMemory(call, l.bytes, ctx.out);
  const m = new Float32Array(mem.memory.buffer);
  packWeights(m, l.weightsAt, p.weights, p.channels, p.k, 0, p.maps);
  m.fill(0, l.biasAt, l.inputAt);
  if (p.bias !== undefined) m.set(p.bias, l.biasAt);
  m.fill(0, l.inputAt + p.input.length, l.outAt);
  const out = moduleOutput(call, m, forCaller, l.outAt, n, ctx.out);
  const b = units.bounds;
  const task = { kind: 'convLayerModule', memory: mem, weightsAt: l.weightsAt, biasAt: l.biasAt, inputAt: l.inputAt, outAt: l.outAt, out: out.ref, relu: p.relu, dims: dimsOf(p), bounds: b, ctrl: units.ctrl } as const;
  const image = p.channels * p.height * p.width;
  let copied = 0;
  const stage = (end: number): void => {
    if (end <= copied) return;
    const t0 = now();
    m.set(p.input.subarray(copied, end), l.inputAt + copied);
    copied = end;
    call.uploadMs += now() - t0;
  };
  const stageUnit = (u: number): void => stage((Math.floor((b[u + 1]! - 1) / p.maps) + 1) * image);
  if (callerShares(env, work)) units.runSharing(task, call.threads, stageUnit, convLayerShare(env, task));
  else units.run(task, call.threads, stageUnit);
  call.copiedInBytes += p.input.byteLength + p.weights.byteLength + (p.bias?.byteLength ?? 0);
  await call.finish(() => out.complete());
  return { data: out.result(), ...copyTimes(call, ctx.timing) };
}
