import { throwIfAborted, UnsupportedError } from '@kernelkit/core';
import { allocScanOutput, type OpContext, type OpImplementation, type OpOutput, type ScanArray, type ScanProblem } from '@kernelkit/ops';
import type { Dispatch, GpuDevice } from '../runtime/device.js';
import { packParams } from '../runtime/params.js';
import { BUF, grid1d } from '../runtime/usage.js';
import { addMs, bytesOf, callTimes, workPerSubmit, type WorkRate } from './common.js';
import { type DecoupledConfig, decoupledConfig, decoupledParams, decoupledVecScan, paddedBytes, stateBytes, tilesFor, uploadPadded } from './scan-decoupled.js';
import { addOffsets, BLELLOCH_BLOCK, blellochBlocks, RTS_TILE, rtsReduce, rtsScan, type WgslScalar } from './scan.wgsl.js';

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
  const b = gpu.small(new Uint32Array(4));
  temps.push(b);
  return b;
};

/** The course reports' scheme: Blelloch per 512-element block, block sums scanned recursively, offsets added back. */
const blellochPlan: Planner = (gpu, t, n, src, dst, init, inclusive, temps) => {
  const blocks = Math.ceil(n / BLELLOCH_BLOCK);
  const sums = temp(gpu, temps, blocks * 4);
  const scan = gpu.pipeline(blellochBlocks(t));
  const out: Dispatch[] = [{ pipeline: scan, bindGroup: gpu.bind(scan, [src, dst, sums, params(gpu, temps, n, 0, false)]), workgroups: grid1d(blocks, gpu.limits.workgroupsPerDimension) }];
  let offs: GPUBuffer;
  if (blocks > 1) {
    offs = temp(gpu, temps, blocks * 4);
    out.push(...blellochPlan(gpu, t, blocks, sums, offs, 0, false, temps));
  } else offs = zeros(gpu, temps);
  const add = gpu.pipeline(addOffsets(t, BLELLOCH_BLOCK));
  out.push({ pipeline: add, bindGroup: gpu.bind(add, [dst, src, offs, params(gpu, temps, n, init, inclusive)]), workgroups: grid1d(Math.ceil(n / 256), gpu.limits.workgroupsPerDimension) });
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
    out.push({ pipeline: red, bindGroup: gpu.bind(red, [src, sums, params(gpu, temps, n, 0, false)]), workgroups: grid1d(tiles, gpu.limits.workgroupsPerDimension) });
    out.push(...rtsPlan(gpu, t, tiles, sums, offs, 0, false, temps));
  } else offs = zeros(gpu, temps);
  const sc = gpu.pipeline(rtsScan(t));
  out.push({ pipeline: sc, bindGroup: gpu.bind(sc, [src, dst, params(gpu, temps, n, init, inclusive), offs]), workgroups: grid1d(tiles, gpu.limits.workgroupsPerDimension) });
  return out;
};

/**
 * One pass: vectorised tiles that find their offsets by decoupled look-back (scan-decoupled.wgsl.ts).
 * The state buffer is created fresh (zeroed by WebGPU); the carry-in travels in a small storage
 * buffer (slot 0), where the streaming scan keeps its GPU-side carry.
 */
const decoupledPlan =
  (config: (gpu: GpuDevice) => DecoupledConfig): Planner =>
  (gpu, t, n, src, dst, init, inclusive, temps) => {
    const cfg = config(gpu);
    const tiles = tilesFor(n, cfg);
    const state = gpu.device.createBuffer({ size: stateBytes(tiles), usage: BUF.STORAGE });
    temps.push(state);
    const carry = gpu.small(new Uint32Array([init, 0, 0, 0]));
    const prm = gpu.uniform(decoupledParams(n, cfg, 0, 1, inclusive));
    temps.push(carry, prm);
    const sc = gpu.pipeline(decoupledVecScan(t, cfg));
    // Tiles are numbered by arrival, so the dispatch shape only has to cover them.
    return [{ pipeline: sc, bindGroup: gpu.bind(sc, [src, dst, prm, state, carry]), workgroups: grid1d(tiles, gpu.limits.workgroupsPerDimension) }];
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

/** What runScan uses of an OpContext. */
type ScanRunContext = Pick<OpContext<ScanArray>, 'out' | 'timing' | 'onProgress' | 'signal'>;

/**
 * Elements per ms, upload and readback included: a low estimate (see WorkRate) that sizes the
 * chunks on a software adapter, where llvmpipe gets about twice this. On a GPU the storage
 * binding limits a chunk first.
 */
const RATE: WorkRate = { software: 2.5e3, hardware: 1e9 };

async function runScan(gpu: GpuDevice, p: ScanProblem, ctx: ScanRunContext, plan: Planner, chunkLimit: number | undefined): Promise<OpOutput<ScanArray>> {
  const input = p.input;
  const n = input.length;
  // The output has the input's element type (WebGPU scans u32, i32 and f32).
  const fresh = (): ScanArray => gpu.output(input.constructor as unknown as { new (length: number): ScanArray; new (buffer: SharedArrayBuffer): ScanArray; readonly BYTES_PER_ELEMENT: number }, n);
  if (n === 0) return { data: ctx.out ?? allocScanOutput(input), kernelMs: 0, uploadMs: 0, readbackMs: 0 };
  const t = p.dtype as WgslScalar;
  // Lengths beyond one binding, or beyond one submit's work, run in chunks; each chunk's
  // carry-in is the previous chunk's total, and the signal is checked between chunks.
  const chunk = Math.max(RTS_TILE, Math.floor(Math.min(chunkLimit ?? Infinity, gpu.limits.storageBinding / 4, workPerSubmit(gpu, RATE)) / RTS_TILE) * RTS_TILE);
  // Chunks each write their part: into an array of our own when the caller gave `out`, copied
  // over at the end, so a failure in a later chunk leaves `out` as it was.
  const out = ctx.out !== undefined && chunk >= n ? ctx.out : fresh();
  const result = await gpu.exclusive(async () => {
    let carry = p.initial;
    let kernelMs: number | undefined = 0;
    for (let s = 0; s < n; s += chunk) {
      throwIfAborted(ctx.signal);
      const len = Math.min(chunk, n - s);
      const temps: GPUBuffer[] = [];
      // Padded to 16 bytes: the decoupled kernels read and write vec4s.
      const src = await uploadPadded(gpu, input.subarray(s, s + len), ctx.signal);
      const dst = gpu.storage(paddedBytes(len));
      const dispatches = plan(gpu, t, len, src, dst, initBits(p, carry), !p.exclusive, temps);
      const lastIn = input[s + len - 1]!; // read before `out` (possibly the input itself) is overwritten
      const r = await gpu.execute(dispatches, [{ buffer: dst, offset: 0, size: len * 4, into: bytesOf(out, s, len) }], ctx.timing, true, ctx.signal);
      carry = nextCarry(p, out[s + len - 1]!, lastIn);
      kernelMs = addMs(kernelMs, r.kernelMs);
      gpu.release(src, dst);
      // The look-back state buffers are not pooled (they must start zeroed): destroy those.
      for (const b of temps) if (b.usage === BUF.STORAGE) b.destroy();
      else gpu.release(b);
      ctx.onProgress?.({ done: s + len, total: n, unit: 'elements' });
    }
    return { data: out, ...callTimes(gpu, kernelMs) };
  });
  if (ctx.out === undefined || out === ctx.out) return result;
  ctx.out.set(out);
  return { ...result, data: ctx.out };
}

/** Runs one scan on `gpu` with an explicit decoupled-kernel configuration (tests sweep tilings and software subgroup sizes through it; tuning runs pass `timing`). */
export function scanWithConfig(gpu: GpuDevice, p: ScanProblem, cfg: DecoupledConfig, opts: { chunkLimit?: number; timing?: boolean } = {}): Promise<OpOutput<ScanArray>> {
  return runScan(gpu, p, { out: undefined, timing: opts.timing ?? false, onProgress: undefined, signal: undefined }, decoupledPlan(() => cfg), opts.chunkLimit);
}

const NO_SUBGROUPS_NOTE = "this adapter has no 'subgroups' feature: ran the workgroup-memory form of the same kernel (what variant decoupled runs)";

export function scanOp(gpu: GpuDevice, chunkLimit?: number): OpImplementation<'scan'> {
  const variant =
    (plan: Planner, notes?: readonly string[]) =>
    async (p: ScanProblem, ctx: OpContext<ScanArray>): Promise<OpOutput<ScanArray>> => {
      const out = await runScan(gpu, p, ctx, plan, chunkLimit);
      return notes === undefined ? out : { ...out, notes };
    };
  return {
    // The faster form where the device has subgroups (the steady-state sweep in scan-decoupled.ts).
    defaultVariant: gpu.subgroups ? 'decoupled-subgroups' : 'decoupled',
    check(p) {
      if (p.dtype === 'f64') throw new UnsupportedError('WebGPU has no f64; pass a Float32Array, Int32Array or Uint32Array', 'input');
    },
    variants: {
      // The workgroup-memory form: runs on every adapter (software subgroups of 32).
      decoupled: variant(decoupledPlan((g) => decoupledConfig(g, 'wg'))),
      // Subgroup builtins for the in-subgroup scans; without the feature, the form above, with a note.
      'decoupled-subgroups': variant(decoupledPlan((g) => decoupledConfig(g, 'subgroups')), gpu.subgroups ? undefined : [NO_SUBGROUPS_NOTE]),
      blelloch: variant(blellochPlan),
      'reduce-then-scan': variant(rtsPlan),
    },
  };
}
