import { UnsupportedError } from '@kernelkit/core';
import { allocScanOutput, type OpContext, type OpImplementation, type OpOutput, type ScanArray, type ScanProblem } from '@kernelkit/ops';
import type { Dispatch, GpuDevice } from '../runtime/device.js';
import { packParams } from '../runtime/params.js';
import { BUF, grid1d } from '../runtime/usage.js';
import { addMs } from './common.js';
import { addOffsets, BLELLOCH_BLOCK, blellochBlocks, decoupledScan, RTS_TILE, rtsReduce, rtsScan, type WgslScalar } from './scan.wgsl.js';

/** Builds the dispatches that scan `n` elements of `src` into `dst` (GPU buffers), adding `init` (raw bits). */
type Planner = (gpu: GpuDevice, t: WgslScalar, n: number, src: GPUBuffer, dst: GPUBuffer, init: number, inclusive: boolean, temps: GPUBuffer[]) => Dispatch[];

const params = (gpu: GpuDevice, temps: GPUBuffer[], n: number, init: number, inclusive: boolean): GPUBuffer => {
  const b = gpu.uniform(packParams([['u32', n], ['u32', init], ['u32', inclusive ? 1 : 0], ['u32', 0]]));
  temps.push(b);
  return b;
};
const temp = (gpu: GpuDevice, temps: GPUBuffer[], bytes: number): GPUBuffer => {
  const b = gpu.storage(bytes);
  temps.push(b);
  return b;
};
const zeros = (gpu: GpuDevice, temps: GPUBuffer[]): GPUBuffer => {
  const b = gpu.upload(new Uint32Array(4));
  temps.push(b);
  return b;
};

/** The seed's scheme: Blelloch per 512-element block, block sums scanned recursively, offsets added back. */
const blellochPlan: Planner = (gpu, t, n, src, dst, init, inclusive, temps) => {
  const blocks = Math.ceil(n / BLELLOCH_BLOCK);
  const sums = temp(gpu, temps, blocks * 4);
  const scan = gpu.pipeline(blellochBlocks(t));
  const out: Dispatch[] = [{ pipeline: scan, bindGroup: gpu.bind(scan, [src, dst, sums, params(gpu, temps, n, 0, false)]), workgroups: grid1d(blocks) }];
  let offs: GPUBuffer;
  if (blocks > 1) {
    offs = temp(gpu, temps, blocks * 4);
    out.push(...blellochPlan(gpu, t, blocks, sums, offs, 0, false, temps));
  } else offs = zeros(gpu, temps);
  const add = gpu.pipeline(addOffsets(t, BLELLOCH_BLOCK));
  out.push({ pipeline: add, bindGroup: gpu.bind(add, [dst, src, offs, params(gpu, temps, n, init, inclusive)]), workgroups: grid1d(Math.ceil(n / 256)) });
  return out;
};

/** Reduce every 2048-element tile, scan the tile sums (recursively), then scan each tile with its offset. */
const rtsPlan: Planner = (gpu, t, n, src, dst, init, inclusive, temps) => {
  const tiles = Math.ceil(n / RTS_TILE);
  const out: Dispatch[] = [];
  let offs: GPUBuffer;
  if (tiles > 1) {
    const sums = temp(gpu, temps, tiles * 4);
    offs = temp(gpu, temps, tiles * 4);
    const red = gpu.pipeline(rtsReduce(t));
    out.push({ pipeline: red, bindGroup: gpu.bind(red, [src, sums, params(gpu, temps, n, 0, false)]), workgroups: grid1d(tiles) });
    out.push(...rtsPlan(gpu, t, tiles, sums, offs, 0, false, temps));
  } else offs = zeros(gpu, temps);
  const sc = gpu.pipeline(rtsScan(t));
  out.push({ pipeline: sc, bindGroup: gpu.bind(sc, [src, dst, params(gpu, temps, n, init, inclusive), offs]), workgroups: grid1d(tiles) });
  return out;
};

/** One pass: tiles find their offsets by decoupled look-back. The state buffer is created fresh (zeroed by WebGPU). */
const decoupledPlan: Planner = (gpu, t, n, src, dst, init, inclusive, temps) => {
  const tiles = Math.ceil(n / RTS_TILE);
  const state = gpu.device.createBuffer({ size: Math.max(16, (1 + 2 * tiles) * 4), usage: BUF.STORAGE });
  temps.push(state);
  const sc = gpu.pipeline(decoupledScan(t));
  // Decoupled kernels number tiles by arrival, so the dispatch shape only has to cover them.
  return [{ pipeline: sc, bindGroup: gpu.bind(sc, [src, dst, params(gpu, temps, n, init, inclusive), state]), workgroups: grid1d(tiles) }];
};

function initBits(p: ScanProblem, carry: number): number {
  if (p.dtype === 'f32') return new Uint32Array(new Float32Array([carry]).buffer)[0]!;
  return carry >>> 0;
}

/** The carry into the next chunk, in the dtype's arithmetic (wrapping or f32 rounding). */
function nextCarry(p: ScanProblem, lastOut: number, lastIn: number): number {
  const v = p.exclusive ? lastOut + lastIn : lastOut;
  return p.dtype === 'u32' ? v >>> 0 : p.dtype === 'i32' ? v | 0 : Math.fround(v);
}

async function runScan(gpu: GpuDevice, p: ScanProblem, ctx: OpContext<ScanArray>, plan: Planner, chunkLimit: number | undefined): Promise<OpOutput<ScanArray>> {
  const input = p.input;
  const n = input.length;
  const out = ctx.out ?? allocScanOutput(input);
  if (n === 0) return { data: out };
  const t = p.dtype as WgslScalar;
  // Lengths beyond one binding run in chunks; each chunk's carry-in is the previous chunk's total.
  const chunk = Math.max(RTS_TILE, Math.floor(Math.min(chunkLimit ?? Infinity, gpu.limits.storageBinding / 4) / RTS_TILE) * RTS_TILE);
  return gpu.exclusive(async () => {
    let carry = p.initial;
    let kernelMs: number | undefined = 0;
    for (let s = 0; s < n; s += chunk) {
      const len = Math.min(chunk, n - s);
      const temps: GPUBuffer[] = [];
      const src = gpu.upload(input.subarray(s, s + len));
      const dst = gpu.storage(len * 4);
      const dispatches = plan(gpu, t, len, src, dst, initBits(p, carry), !p.exclusive, temps);
      const lastIn = input[s + len - 1]!; // read before `out` (possibly the input itself) is overwritten
      const r = await gpu.execute(dispatches, [{ buffer: dst, offset: 0, size: len * 4 }], ctx.timing);
      const view = new (input.constructor as new (b: ArrayBuffer) => ScanArray)(r.data[0]!);
      out.set(view, s);
      carry = nextCarry(p, view[len - 1]!, lastIn);
      kernelMs = addMs(kernelMs, r.kernelMs);
      gpu.release(src, dst);
      // The look-back state buffers are not pooled (they must start zeroed): destroy those.
      for (const b of temps) if (b.usage === BUF.STORAGE) b.destroy();
      else gpu.release(b);
      ctx.onProgress?.({ done: s + len, total: n, unit: 'elements' });
    }
    return { data: out, kernelMs };
  });
}

export function scanOp(gpu: GpuDevice, chunkLimit?: number): OpImplementation<'scan'> {
  return {
    defaultVariant: 'decoupled',
    check(p) {
      if (p.dtype === 'f64') throw new UnsupportedError('WebGPU has no f64; pass a Float32Array, Int32Array or Uint32Array', 'input');
    },
    variants: {
      blelloch: (p, ctx) => runScan(gpu, p, ctx, blellochPlan, chunkLimit),
      'reduce-then-scan': (p, ctx) => runScan(gpu, p, ctx, rtsPlan, chunkLimit),
      decoupled: (p, ctx) => runScan(gpu, p, ctx, decoupledPlan, chunkLimit),
    },
  };
}
