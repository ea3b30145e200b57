import { LimitExceededError, throwIfAborted, UnsupportedError } from '@kernelkit/core';
import { allocScanOutput, isDeviceArray, type DeviceArray, type OpContext, type OpOutput, type ResidentOpImplementation, type ResidentProblem, type ScanArray, type ScanProblem } from '@kernelkit/ops';
import { copyBuffer, gpuDeviceArray, residentBuffer, type GpuDtype } from '../runtime/device-array.js';
import type { Binding, Dispatch, GpuDevice } from '../runtime/device.js';
import { packParams } from '../runtime/params.js';
import { hostOutput, sinkReads, stageInput, submitSinkCopy, type ChunkSink } from '../runtime/pipeline.js';
import { BUF, grid1d } from '../runtime/usage.js';
import { addMs, bytesOf, callTimes, workPerSubmit, type CallTimes, type WorkRate } from './common.js';
import { type DecoupledConfig, decoupledConfig, decoupledParams, decoupledVecScan, paddedBytes, stateBytes, tilesFor, uploadPadded } from './scan-decoupled.js';
import { addOffsets, BLELLOCH_BLOCK, blellochBlocks, RTS_TILE, rtsReduce, rtsScan, type WgslScalar } from './scan.wgsl.js';

/**
 * Builds the dispatches that scan `n` elements of `src` into `dst` (bindings of at least
 * paddedBytes(n) bytes). The carry into the first element is `carry.init` (raw bits) for the
 * multi-pass plans; the decoupled plan reads it from `carry.buffer[inSlot]` and writes the
 * inclusive value of element n−1 to `carry.buffer[outSlot]`, so chunks chain on the GPU.
 */
type Planner = (gpu: GpuDevice, t: WgslScalar, n: number, src: Binding, dst: Binding, carry: CarryIn, inclusive: boolean, temps: GPUBuffer[]) => Dispatch[];

interface CarryIn {
  readonly init: number;
  readonly buffer: GPUBuffer;
  readonly inSlot: number;
  readonly outSlot: number;
}

/** A plan and whether it keeps the carry between chunks on the GPU (else the host adds it). */
interface ScanPlan {
  readonly plan: Planner;
  readonly gpuCarry: boolean;
}

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

/** The multi-pass plans recurse on their block sums with no carry. */
const noCarry = (c: CarryIn): CarryIn => ({ ...c, init: 0 });

/** The course reports' scheme: Blelloch per 512-element block, block sums scanned recursively, offsets added back. */
const blellochPlan: Planner = (gpu, t, n, src, dst, carry, inclusive, temps) => {
  const blocks = Math.ceil(n / BLELLOCH_BLOCK);
  const sums = temp(gpu, temps, blocks * 4);
  const scan = gpu.pipeline(blellochBlocks(t));
  const out: Dispatch[] = [{ pipeline: scan, bindGroup: gpu.bind(scan, [src, dst, sums, params(gpu, temps, n, 0, false)]), workgroups: grid1d(blocks, gpu.limits.workgroupsPerDimension) }];
  let offs: GPUBuffer;
  if (blocks > 1) {
    offs = temp(gpu, temps, blocks * 4);
    out.push(...blellochPlan(gpu, t, blocks, sums, offs, noCarry(carry), false, temps));
  } else offs = zeros(gpu, temps);
  const add = gpu.pipeline(addOffsets(t, BLELLOCH_BLOCK));
  out.push({ pipeline: add, bindGroup: gpu.bind(add, [dst, src, offs, params(gpu, temps, n, carry.init, inclusive)]), workgroups: grid1d(Math.ceil(n / 256), gpu.limits.workgroupsPerDimension) });
  return out;
};

/** Reduce every 2048-element tile, scan the tile sums (recursively), then scan each tile with its offset. */
const rtsPlan: Planner = (gpu, t, n, src, dst, carry, inclusive, temps) => {
  const tiles = Math.ceil(n / RTS_TILE);
  const out: Dispatch[] = [];
  let offs: GPUBuffer;
  if (tiles > 1) {
    const sums = temp(gpu, temps, tiles * 4);
    offs = temp(gpu, temps, tiles * 4);
    const red = gpu.pipeline(rtsReduce(t));
    out.push({ pipeline: red, bindGroup: gpu.bind(red, [src, sums, params(gpu, temps, n, 0, false)]), workgroups: grid1d(tiles, gpu.limits.workgroupsPerDimension) });
    out.push(...rtsPlan(gpu, t, tiles, sums, offs, noCarry(carry), false, temps));
  } else offs = zeros(gpu, temps);
  const sc = gpu.pipeline(rtsScan(t));
  out.push({ pipeline: sc, bindGroup: gpu.bind(sc, [src, dst, params(gpu, temps, n, carry.init, inclusive), offs]), workgroups: grid1d(tiles, gpu.limits.workgroupsPerDimension) });
  return out;
};

/**
 * One pass: vectorised tiles that find their offsets by decoupled look-back (scan-decoupled.wgsl.ts).
 * The state buffer is created fresh (zeroed by WebGPU); the carry-in and carry-out travel in the
 * carry buffer's slots, as in the streaming scan.
 */
const decoupledPlan = (config: (gpu: GpuDevice) => DecoupledConfig): ScanPlan => ({
  gpuCarry: true,
  plan: (gpu, t, n, src, dst, carry, inclusive, temps) => {
    const cfg = config(gpu);
    const tiles = tilesFor(n, cfg);
    const state = gpu.device.createBuffer({ size: stateBytes(tiles), usage: BUF.STORAGE });
    temps.push(state);
    const prm = gpu.uniform(decoupledParams(n, cfg, carry.inSlot, carry.outSlot, inclusive));
    temps.push(prm);
    const sc = gpu.pipeline(decoupledVecScan(t, cfg));
    // Tiles are numbered by arrival, so the dispatch shape only has to cover them.
    return [{ pipeline: sc, bindGroup: gpu.bind(sc, [src, dst, prm, state, carry.buffer]), workgroups: grid1d(tiles, gpu.limits.workgroupsPerDimension) }];
  },
});

function initBits(p: Pick<ScanProblem, 'dtype'>, carry: number): number {
  if (p.dtype === 'f32') return new Uint32Array(new Float32Array([carry]).buffer)[0]!;
  return carry >>> 0;
}

/** The carry into the next chunk, in the dtype's arithmetic (wrapping or f32 rounding). */
function nextCarry(p: Pick<ScanProblem, 'dtype' | 'exclusive'>, lastOut: number, lastIn: number): number {
  const v = p.exclusive ? lastOut + lastIn : lastOut;
  return p.dtype === 'u32' ? v >>> 0 : p.dtype === 'i32' ? v | 0 : Math.fround(v);
}

/** What runScan uses of an OpContext. */
type ScanRunContext = Pick<OpContext<ScanArray>, 'out' | 'timing' | 'onProgress' | 'signal' | 'output' | 'deviceArray'>;

/**
 * Elements per ms, upload and readback included: a low estimate (see WorkRate) that sizes the
 * chunks on a software adapter, where llvmpipe gets about twice this. On a GPU the storage
 * binding limits a chunk first.
 */
const RATE: WorkRate = { software: 2.5e3, hardware: 1e9 };

type ScanCtor = { new (length: number): ScanArray; new (buffer: SharedArrayBuffer): ScanArray; new (buffer: ArrayBuffer): ScanArray; readonly BYTES_PER_ELEMENT: number };
const CTORS: Record<GpuDtype, ScanCtor> = { f32: Float32Array, u32: Uint32Array, i32: Int32Array };

/** Reads one 32-bit element of `buffer` (the host carry when input or output stays on the device). */
async function readElement(gpu: GpuDevice, buffer: GPUBuffer, index: number, dtype: GpuDtype): Promise<number> {
  const word = new CTORS[dtype](1);
  await gpu.read(buffer, index * 4, 4, bytesOf(word, 0, 1));
  return word[0]!;
}

/**
 * The input is a host array (uploaded chunk by chunk through the staging ring, or a large one
 * copied whole into the upload landing buffer and copied from there chunk by chunk on the GPU)
 * or this backend's own DeviceArray (bound where it is, or copied on the device into a padded
 * buffer where the vec4 kernels would read past its end). With `output: 'device'` every chunk
 * writes its part of one device buffer, returned as the handle; otherwise the chunks go to the
 * host output through `hostOutput` (runtime/pipeline.ts): into the landing buffer and then `out`
 * when the caller gave one, else read back into a fresh array.
 */
async function runScan(gpu: GpuDevice, p: ResidentProblem<'scan'>, ctx: ScanRunContext, scan: ScanPlan, chunkLimit: number | undefined): Promise<OpOutput<ScanArray>> {
  const input = p.input;
  const n = input.length;
  const dtype = p.dtype as GpuDtype;
  const toDevice = ctx.output === 'device';
  if (n === 0) return { data: ctx.out ?? allocScanOutput(isDeviceArray(input) ? new CTORS[dtype](0) : input), kernelMs: 0, uploadMs: 0, readbackMs: 0 };
  if (toDevice && paddedBytes(n) > gpu.limits.bufferSize) {
    throw new LimitExceededError('input', `a device output of ${paddedBytes(n)} bytes is larger than this device's largest buffer (${gpu.limits.bufferSize} bytes); ask for output: 'array'`);
  }
  // Lengths beyond one binding, or beyond one submit's work, run in chunks; each chunk's
  // carry-in is the previous chunk's total, and the signal is checked between chunks. Chunks
  // are whole RTS tiles, so every chunk's byte offset meets the binding offset alignment.
  const chunk = Math.max(RTS_TILE, Math.floor(Math.min(chunkLimit ?? Infinity, gpu.limits.storageBinding / 4, workPerSubmit(gpu, RATE)) / RTS_TILE) * RTS_TILE);
  if (toDevice) {
    return gpu.exclusive(async () => {
      const target = gpu.storage(paddedBytes(n));
      const times = await scanChunks(gpu, p, ctx, scan, chunk, { buffer: target });
      return { data: gpuDeviceArray(gpu, ctx.deviceArray, target, n, dtype) as OpOutput<ScanArray>['data'], ...times };
    });
  }
  const r = await hostOutput(gpu, ctx.out, CTORS[dtype], n, ctx.signal, (sink) => scanChunks(gpu, p, ctx, scan, chunk, sink));
  return { data: r.data, ...r.result, ...r.transfer, ...(r.note === undefined ? {} : { notes: [r.note] }) };
}

/**
 * The scan in chunks of `chunk` elements into `sink`: a host array (each chunk read back into
 * its part), the landing buffer (each chunk copied into its part on the GPU) or a device output
 * (a storage buffer each chunk binds at its offset). Runs inside the caller's exclusive section.
 */
async function scanChunks(gpu: GpuDevice, p: ResidentProblem<'scan'>, ctx: ScanRunContext, scan: ScanPlan, chunk: number, sink: ChunkSink): Promise<CallTimes> {
  const input = p.input;
  const n = input.length;
  const dtype = p.dtype as GpuDtype;
  const t = dtype as WgslScalar;
  const hostInput = isDeviceArray(input) ? undefined : input;
  const target = 'buffer' in sink && (sink.buffer.usage & BUF.STORAGE) !== 0 ? sink.buffer : undefined;
  const host = 'host' in sink ? (sink.host as ScanArray) : undefined;
  const staged = hostInput !== undefined ? await stageInput(gpu, hostInput, Math.ceil(n / chunk), ctx.signal) : undefined;
  try {
    // Where chunks copy their input from on the GPU: a resident input, or the staged host input.
    const source = hostInput === undefined ? residentBuffer(gpu, input as DeviceArray<ScanArray>, 'input') : staged?.buffer;
    const carryBuffer = gpu.small(new Uint32Array([initBits(p, p.initial), 0, 0, 0]));
    let carry = p.initial;
    let kernelMs: number | undefined = 0;
    for (let s = 0, index = 0; s < n; s += chunk, index++) {
      throwIfAborted(ctx.signal);
      const len = Math.min(chunk, n - s);
      const bytes = paddedBytes(len);
      const temps: GPUBuffer[] = [];
      const owned: GPUBuffer[] = [];
      // Padded to 16 bytes: the decoupled kernels read and write vec4s. A staged input is
      // always copied (a mappable buffer cannot be bound); a resident one is bound in place
      // where its padded range lies inside it.
      let src: Binding;
      if (source === undefined) {
        const b = await uploadPadded(gpu, hostInput!.subarray(s, s + len), ctx.signal);
        owned.push(b);
        src = b;
      } else if (staged === undefined && s * 4 + bytes <= source.size) src = { buffer: source, offset: s * 4, size: bytes };
      else {
        const b = gpu.storage(bytes);
        owned.push(b);
        copyBuffer(gpu, source, s * 4, b, 0, len * 4);
        src = b;
      }
      let dst: Binding;
      if (target !== undefined) dst = { buffer: target, offset: s * 4, size: bytes };
      else {
        const b = gpu.storage(bytes);
        owned.push(b);
        dst = b;
      }
      const dstBuffer = 'buffer' in dst ? dst.buffer : dst;
      const dstOffset = 'buffer' in dst ? (dst.offset ?? 0) : 0;
      const carryIn: CarryIn = { init: initBits(p, carry), buffer: carryBuffer, inSlot: index % 2, outSlot: 1 - (index % 2) };
      const dispatches = scan.plan(gpu, t, len, src, dst, carryIn, !p.exclusive, temps);
      const last = s + len - 1;
      const lastIn = scan.gpuCarry ? 0 : hostInput !== undefined ? hostInput[last]! : await readElement(gpu, source!, last, dtype);
      const reads = sinkReads(sink, dstBuffer, dstOffset, len * 4, s * 4);
      const r = await gpu.execute(dispatches, reads, ctx.timing, index === 0, ctx.signal);
      if (target === undefined) submitSinkCopy(gpu, sink, dstBuffer, 0, len * 4, s * 4);
      if (!scan.gpuCarry && s + len < n) {
        const lastOut = host !== undefined ? host[last]! : await readElement(gpu, dstBuffer, dstOffset / 4 + len - 1, dtype);
        carry = nextCarry(p, lastOut, lastIn);
      }
      kernelMs = addMs(kernelMs, r.kernelMs);
      gpu.release(...owned);
      // The look-back state buffers are not pooled (they must start zeroed): destroy those.
      for (const b of temps) if (b.usage === BUF.STORAGE) b.destroy();
      else gpu.release(b);
      ctx.onProgress?.({ done: s + len, total: n, unit: 'elements' });
    }
    gpu.release(carryBuffer);
    return callTimes(gpu, kernelMs);
  } finally {
    staged?.release();
  }
}

/** Runs one scan on `gpu` with an explicit decoupled-kernel configuration (tests sweep tilings and software subgroup sizes through it; tuning runs pass `timing`). */
export async function scanWithConfig(gpu: GpuDevice, p: ScanProblem, cfg: DecoupledConfig, opts: { chunkLimit?: number; timing?: boolean } = {}): Promise<OpOutput<ScanArray>> {
  const noHandles = (): never => {
    throw new Error('scanWithConfig returns host arrays');
  };
  return runScan(gpu, p, { out: undefined, timing: opts.timing ?? false, onProgress: undefined, signal: undefined, output: 'array', deviceArray: noHandles }, decoupledPlan(() => cfg), opts.chunkLimit);
}

const NO_SUBGROUPS_NOTE = "this adapter has no 'subgroups' feature: ran the workgroup-memory form of the same kernel (what variant decoupled runs)";

const multiPass = (plan: Planner): ScanPlan => ({ plan, gpuCarry: false });

/** Takes this backend's own DeviceArray inputs where they are (no read-back) and keeps the output on the device with `output: 'device'`. */
export function scanOp(gpu: GpuDevice, chunkLimit?: number): ResidentOpImplementation<'scan'> {
  const variant =
    (plan: ScanPlan, notes?: readonly string[]) =>
    async (p: ResidentProblem<'scan'>, ctx: OpContext<ScanArray>): Promise<OpOutput<ScanArray>> => {
      const out = await runScan(gpu, p, ctx, plan, chunkLimit);
      return notes === undefined ? out : { ...out, notes };
    };
  return {
    residentInputs: true,
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
      blelloch: variant(multiPass(blellochPlan)),
      'reduce-then-scan': variant(multiPass(rtsPlan)),
    },
  };
}
