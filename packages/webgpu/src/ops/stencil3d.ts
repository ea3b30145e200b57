import { LimitExceededError, throwIfAborted, UnsupportedError } from '@kernelkit/core';
import { isDeviceArray, type DeviceArray, type OpContext, type OpOutput, type ResidentOpImplementation, type ResidentProblem } from '@kernelkit/ops';
import { copyBuffer, gpuDeviceArray, residentBuffer } from '../runtime/device-array.js';
import type { Dispatch, GpuDevice } from '../runtime/device.js';
import { packParams } from '../runtime/params.js';
import type { Landing } from '../runtime/landing.js';
import { hostOutput, sinkReads, stageInput, submitSinkCopy, type ChunkSink } from '../runtime/pipeline.js';
import type { Program } from '../runtime/program.js';
import { gridParts, submitsOf, type GridPart } from '../runtime/usage.js';
import { STREAMED, stencilNaive, stencilStreamed, stencilTiled, TILED } from './stencil3d.wgsl.js';
import { addMs, callTimes, workPerSubmit, type CallTimes, type WorkRate } from './common.js';

type Problem = ResidentProblem<'stencil3d'>;
type Dims = readonly [nx: number, ny: number, nz: number];

/** How a variant covers a grid of nx×ny×nz cells: its workgroups, the cells each updates per step, and its rate in cell updates per ms (low estimates, see WorkRate). */
interface Layout {
  readonly workgroups: (d: Dims) => [number, number, number];
  readonly groupCells: number;
  readonly rate: WorkRate;
}

/** Test hook (`setStencilBindingBytes` in testing.ts): a smaller storage binding than the device's, so test-sized grids run as slabs. */
const bindingOverrides = new WeakMap<GpuDevice, number>();

export function setStencilBindingBytes(gpu: GpuDevice, bytes: number | undefined): void {
  if (bytes === undefined) bindingOverrides.delete(gpu);
  else bindingOverrides.set(gpu, bytes);
}

const bindingBytes = (gpu: GpuDevice): number => Math.min(gpu.limits.storageBinding, bindingOverrides.get(gpu) ?? Infinity);

/**
 * One z-slab of a grid larger than a binding: global planes [z0, z1) are its own, held at local
 * planes [lo, hi) of its two ping-pong buffers, with a halo plane below (every slab but the
 * first) and above (every slab but the last) copied from its neighbours between steps.
 */
interface Slab {
  readonly z0: number;
  readonly z1: number;
  /** Global plane of local plane 0. */
  readonly zoff: number;
  /** Planes the buffers hold (owned and halo). */
  readonly planes: number;
  readonly lo: number;
  readonly hi: number;
}

/** The grid's z range cut into the fewest slabs whose planes (halos included) fit `planesPerBinding`, their sizes differing by at most one plane. */
export function slabsOf(nz: number, planesPerBinding: number): Slab[] {
  const own = planesPerBinding - 2;
  const count = Math.ceil(nz / own);
  const base = Math.floor(nz / count);
  const extra = nz % count;
  const slabs: Slab[] = [];
  for (let i = 0, z0 = 0; i < count; i++) {
    const z1 = z0 + base + (i < extra ? 1 : 0);
    const zoff = i === 0 ? 0 : z0 - 1;
    const top = i === count - 1 ? z1 : z1 + 1;
    slabs.push({ z0, z1, zoff, planes: top - zoff, lo: z0 - zoff, hi: z1 - zoff });
    z0 = z1;
  }
  return slabs;
}

const paramsOf = (p: Problem, part: GridPart, planes: number, zoff: number, lo: number, hi: number): ArrayBuffer =>
  packParams([
    ['u32', p.nx],
    ['u32', p.ny],
    ['u32', planes],
    ['u32', p.boundary === 'copy' ? 1 : 0],
    ['f32', p.c0],
    ['f32', p.c1],
    ['u32', part.offset[0]],
    ['u32', part.offset[1]],
    ['u32', part.offset[2]],
    ['u32', zoff],
    ['u32', p.nz],
    ['u32', lo],
    ['u32', hi],
    ['u32', 0],
    ['u32', 0],
    ['u32', 0],
  ]);

/**
 * The input is a host array (uploaded into a buffer the steps may overwrite; a large one through
 * the upload landing buffer, then copied on the GPU) or this backend's own DeviceArray (read,
 * never written: the steps ping-pong between two other buffers). With `output: 'device'` the
 * last grid stays on the GPU as the returned handle; otherwise it goes to the host output
 * through `hostOutput` (runtime/pipeline.ts): into the landing buffer and then `out` when the
 * caller gave one, else read back into a fresh array. A grid larger than one storage binding
 * runs as z-slabs (slabBody).
 */
async function runStencil(gpu: GpuDevice, p: Problem, ctx: OpContext<Float32Array | Float64Array>, program: Program, layout: Layout): Promise<OpOutput<Float32Array | Float64Array>> {
  const input = p.input;
  const n = p.nx * p.ny * p.nz;
  const toDevice = ctx.output === 'device';
  if (p.steps === 0 && !toDevice && !isDeviceArray(input)) {
    const out = (ctx.out as Float32Array | undefined) ?? gpu.output(Float32Array, n);
    out.set(input);
    // Nothing ran on the GPU: the copy is the whole call.
    return { data: out, kernelMs: 0, uploadMs: 0, readbackMs: 0 };
  }
  // A zero-step call to the device uploads the whole grid into one buffer.
  if (p.steps === 0 && toDevice && !isDeviceArray(input) && n * 4 > gpu.limits.bufferSize) {
    throw new LimitExceededError('input', `a ${p.nx}×${p.ny}×${p.nz} grid (${n * 4} bytes) is larger than this device's largest buffer (${gpu.limits.bufferSize} bytes)`);
  }
  const slabs = p.steps > 0 && n * 4 > bindingBytes(gpu) ? slabPlan(gpu, p, toDevice) : undefined;
  const body = (sink: ChunkSink | undefined): Promise<StencilRun> => (slabs === undefined ? gridBody(gpu, p, ctx, program, layout, sink) : slabBody(gpu, p, ctx, program, layout, slabs, sink));
  if (toDevice) {
    const r = await gpu.exclusive(() => body(undefined));
    return { data: gpuDeviceArray(gpu, ctx.deviceArray, r.buffer!, n), ...r.times };
  }
  const r = await hostOutput(gpu, ctx.out as Float32Array | undefined, Float32Array, n, ctx.signal, body);
  return { data: r.data, ...r.result.times, ...r.transfer, ...(r.note === undefined ? {} : { notes: [r.note] }) };
}

/** What a stencil body leaves: the device output's buffer (no sink: `output: 'device'`), and the call's times. */
interface StencilRun {
  readonly buffer?: GPUBuffer | undefined;
  readonly times: CallTimes;
}

/**
 * A host input on the device in `into` (a buffer of at least its size): copied from the staged
 * upload landing buffer, or written through the ring where the call stages through that.
 */
async function placeInput(gpu: GpuDevice, staged: Landing | undefined, data: Float32Array, from: number, into: GPUBuffer, signal: AbortSignal | undefined): Promise<void> {
  if (staged !== undefined) copyBuffer(gpu, staged.buffer, from * 4, into, 0, data.byteLength);
  else await gpu.write(into, 0, data, signal);
}

/** The grid in one pair of buffers, its steps ping-ponging between them; the last grid goes to `sink` (none: kept as the device output). */
async function gridBody(gpu: GpuDevice, p: Problem, ctx: OpContext<Float32Array | Float64Array>, program: Program, layout: Layout, sink: ChunkSink | undefined): Promise<StencilRun> {
  const input = p.input;
  const n = p.nx * p.ny * p.nz;
  const resident = isDeviceArray(input);
  const host = resident ? undefined : (input as Float32Array);
  const staged = host !== undefined ? await stageInput(gpu, host, 1, ctx.signal) : undefined;
  let src: GPUBuffer;
  try {
    if (resident) src = residentBuffer(gpu, input, 'input');
    else {
      src = gpu.storage(n * 4);
      await placeInput(gpu, staged, host!, 0, src, ctx.signal);
    }
  } finally {
    staged?.release();
  }
  /** Sends `grid` to the sink, after everything submitted so far. */
  const deliver = async (grid: GPUBuffer): Promise<void> => {
    if (sink === undefined) return;
    const reads = sinkReads(sink, grid, 0, n * 4, 0);
    if (reads.length > 0) await gpu.execute([], reads, false, false, ctx.signal);
    submitSinkCopy(gpu, sink, grid, 0, n * 4, 0);
  };
  if (p.steps === 0) {
    if (sink === undefined && !resident) return { buffer: src, times: callTimes(gpu, 0) };
    if (sink === undefined) {
      const copy = gpu.storage(n * 4);
      copyBuffer(gpu, src, 0, copy, 0, n * 4);
      return { buffer: copy, times: callTimes(gpu, 0) };
    }
    await deliver(src);
    if (!resident) gpu.release(src);
    return { times: callTimes(gpu, 0) };
  }
  const pipeline = gpu.pipeline(program);
  const b = gpu.storage(n * 4);
  // A host input's upload is ours to overwrite; a resident input is the caller's.
  const c = resident ? gpu.storage(n * 4) : src;
  // The grid in parts within the device's per-dimension limit, each part small enough for one submit.
  const maxGroups = workPerSubmit(gpu, layout.rate) / layout.groupCells;
  const parts = gridParts(layout.workgroups([p.nx, p.ny, p.nz]), gpu.limits.workgroupsPerDimension, maxGroups);
  const params = parts.map((part) => gpu.uniform(paramsOf(p, part, p.nz, 0, 0, p.nz)));
  const bind = (from: GPUBuffer, to: GPUBuffer) => params.map((u) => gpu.bind(pipeline, [{ buffer: from, size: n * 4 }, { buffer: to, size: n * 4 }, u]));
  const first = bind(src, b);
  const bc = bind(b, c);
  const cb = resident ? bind(c, b) : first;
  const last = p.steps % 2 === 1 ? b : c;
  const spare = last === b ? c : b;
  // The steps ping-pong on the GPU; only the final grid leaves it (if at all). Step after step,
  // part after part, cut into submits of about SUBMIT_MS of work with an abort check between
  // them: one submit for short calls, many for long step counts on a software adapter.
  let kernelMs: number | undefined = 0;
  let step = 0;
  let at = 0;
  let submits = 0;
  while (step < p.steps) {
    const dispatches: Dispatch[] = [];
    let groups = 0;
    while (step < p.steps) {
      const part = parts[at]!;
      const size = part.workgroups[0] * part.workgroups[1] * part.workgroups[2];
      if (dispatches.length > 0 && groups + size > maxGroups) break;
      dispatches.push({ pipeline, bindGroup: (step === 0 ? first : step % 2 === 1 ? bc : cb)[at]!, workgroups: part.workgroups });
      groups += size;
      if (++at === parts.length) {
        at = 0;
        step++;
      }
    }
    const done = step === p.steps;
    // The last submit carries the readback into a host sink (gated on its pass).
    const reads = done && sink !== undefined ? sinkReads(sink, last, 0, n * 4, 0) : [];
    const r = await gpu.execute(dispatches, reads, ctx.timing, submits++ === 0, ctx.signal);
    kernelMs = addMs(kernelMs, r.kernelMs);
    if (!done) throwIfAborted(ctx.signal);
  }
  gpu.release(...params);
  if (sink === undefined) {
    gpu.release(spare);
    return { buffer: last, times: callTimes(gpu, kernelMs) };
  }
  submitSinkCopy(gpu, sink, last, 0, n * 4, 0);
  gpu.release(b, c);
  return { times: callTimes(gpu, kernelMs) };
}

/** The slabs of a grid larger than one storage binding (slabsOf), or the reason it cannot run. */
function slabPlan(gpu: GpuDevice, p: Problem, toDevice: boolean): Slab[] {
  const planeBytes = p.nx * p.ny * 4;
  const n = p.nx * p.ny * p.nz;
  const planesPerBinding = Math.floor(bindingBytes(gpu) / planeBytes);
  if (planesPerBinding < 3) {
    throw new LimitExceededError('input', `a ${p.nx}×${p.ny}×${p.nz} grid (${n * 4} bytes) is larger than one storage binding (${bindingBytes(gpu)} bytes), and z-slabs need three of its ${p.nx}×${p.ny} planes (${3 * planeBytes} bytes) per binding`);
  }
  if (toDevice && n * 4 > gpu.limits.bufferSize) {
    throw new LimitExceededError('input', `a device output of ${n * 4} bytes is larger than this device's largest buffer (${gpu.limits.bufferSize} bytes); ask for output: 'array'`);
  }
  return slabsOf(p.nz, planesPerBinding);
}

/**
 * A grid larger than one storage binding, as z-slabs (slabsOf) each in two ping-pong buffers of
 * its own: every slab must stay on the device across the steps, so device memory is about twice
 * the grid. A step runs the stencil over every slab's own planes, then copies each slab's edge
 * planes into its neighbours' halo planes on the device. The input is uploaded slab by slab, or
 * (resident, or a large host input staged whole in the upload landing buffer) copied on the
 * device; the owned planes of the last grid are copied on the GPU into one buffer (the landing
 * buffer, or a new one for `output: 'device'`) or read back into a host sink.
 */
async function slabBody(gpu: GpuDevice, p: Problem, ctx: OpContext<Float32Array | Float64Array>, program: Program, layout: Layout, slabs: readonly Slab[], sink: ChunkSink | undefined): Promise<StencilRun> {
  const plane = p.nx * p.ny;
  const planeBytes = plane * 4;
  const n = plane * p.nz;
  const input = p.input;
  const pipeline = gpu.pipeline(program);
  const maxGroups = workPerSubmit(gpu, layout.rate) / layout.groupCells;
  const host = isDeviceArray(input) ? undefined : (input as Float32Array);
  const held: GPUBuffer[] = [];
  const uniforms: GPUBuffer[] = [];
  // Per slab: its two buffers and, per grid part, the bind groups of both step directions.
  const runs = [];
  const staged = host !== undefined ? await stageInput(gpu, host, slabs.length, ctx.signal) : undefined;
  try {
    const resident = host === undefined ? residentBuffer(gpu, input as DeviceArray<Float32Array>, 'input') : undefined;
    for (const slab of slabs) {
      const bytes = slab.planes * planeBytes;
      const a = gpu.storage(bytes);
      const b = gpu.storage(bytes);
      held.push(a, b);
      if (resident !== undefined) copyBuffer(gpu, resident, slab.zoff * planeBytes, a, 0, bytes);
      else await placeInput(gpu, staged, host!.subarray(slab.zoff * plane, (slab.zoff + slab.planes) * plane), slab.zoff * plane, a, ctx.signal);
      const parts = gridParts(layout.workgroups([p.nx, p.ny, slab.planes]), gpu.limits.workgroupsPerDimension, maxGroups);
      const bound = parts.map((part) => {
        const u = gpu.uniform(paramsOf(p, part, slab.planes, slab.zoff, slab.lo, slab.hi));
        uniforms.push(u);
        const bind = (from: GPUBuffer, to: GPUBuffer) => gpu.bind(pipeline, [{ buffer: from, size: bytes }, { buffer: to, size: bytes }, u]);
        return { workgroups: part.workgroups, forward: bind(a, b), back: bind(b, a) };
      });
      runs.push({ slab, a, b, bound });
    }
  } finally {
    staged?.release();
  }
  throwIfAborted(ctx.signal);
  const work = runs.flatMap((r) => r.bound);
  let kernelMs: number | undefined = 0;
  let submits = 0;
  for (let step = 0; step < p.steps; step++) {
    // Step s writes b when s is even, a when odd.
    for (const group of submitsOf(work, maxGroups)) {
      const dispatches = group.map((w) => ({ pipeline, bindGroup: step % 2 === 0 ? w.forward : w.back, workgroups: w.workgroups }));
      const r = await gpu.execute(dispatches, [], ctx.timing, submits++ === 0, ctx.signal);
      kernelMs = addMs(kernelMs, r.kernelMs);
      throwIfAborted(ctx.signal);
    }
    if (step + 1 < p.steps) exchangeHalos(gpu, runs.map((r) => ({ slab: r.slab, buffer: step % 2 === 0 ? r.b : r.a })), planeBytes);
  }
  const last = runs.map((r) => ({ slab: r.slab, buffer: p.steps % 2 === 1 ? r.b : r.a }));
  const target = sink === undefined ? gpu.storage(n * 4) : 'buffer' in sink ? sink.buffer : undefined;
  if (target !== undefined) {
    const enc = gpu.device.createCommandEncoder();
    for (const { slab, buffer } of last) enc.copyBufferToBuffer(buffer, slab.lo * planeBytes, target, slab.z0 * planeBytes, (slab.z1 - slab.z0) * planeBytes);
    gpu.device.queue.submit([enc.finish()]);
  } else {
    const reads = last.flatMap(({ slab, buffer }) => sinkReads(sink!, buffer, slab.lo * planeBytes, (slab.z1 - slab.z0) * planeBytes, slab.z0 * planeBytes));
    await gpu.execute([], reads, false, false, ctx.signal);
  }
  gpu.release(...uniforms, ...held);
  return { buffer: sink === undefined ? target : undefined, times: callTimes(gpu, kernelMs) };
}

/** Copies each slab's first and last own planes into the halo planes of the slabs below and above it (queue-ordered after the step). */
function exchangeHalos(gpu: GpuDevice, grids: readonly { readonly slab: Slab; readonly buffer: GPUBuffer }[], planeBytes: number): void {
  if (grids.length < 2) return;
  const enc = gpu.device.createCommandEncoder();
  for (let i = 0; i + 1 < grids.length; i++) {
    const below = grids[i]!;
    const above = grids[i + 1]!;
    // The plane above `below`'s last own plane is `above`'s first, and the other way round.
    enc.copyBufferToBuffer(above.buffer, above.slab.lo * planeBytes, below.buffer, below.slab.hi * planeBytes, planeBytes);
    enc.copyBufferToBuffer(below.buffer, (below.slab.hi - 1) * planeBytes, above.buffer, 0, planeBytes);
  }
  gpu.device.queue.submit([enc.finish()]);
}

/** Low estimates (see WorkRate): llvmpipe on two cores gets about twice these; the tiled kernel's barriers cost most there. */
const NAIVE: Layout = { workgroups: ([nx, ny, nz]) => [Math.ceil((nx * ny * nz) / 256), 1, 1], groupCells: 256, rate: { software: 2.5e4, hardware: 2e8 } };
const TILED_LAYOUT: Layout = {
  workgroups: ([nx, ny, nz]) => [Math.ceil(nx / TILED.tx), Math.ceil(ny / TILED.ty), Math.ceil(nz / TILED.tz)],
  groupCells: TILED.tx * TILED.ty * TILED.tz,
  rate: { software: 5e3, hardware: 1e8 },
};
const STREAMED_LAYOUT: Layout = {
  workgroups: ([nx, ny, nz]) => [Math.ceil(nx / STREAMED.tx), Math.ceil(ny / STREAMED.ty), Math.ceil(nz / STREAMED.zb)],
  groupCells: STREAMED.tx * STREAMED.ty * STREAMED.zb,
  rate: { software: 1.7e4, hardware: 2e8 },
};

export function stencil3dOp(gpu: GpuDevice): ResidentOpImplementation<'stencil3d'> {
  const naive = stencilNaive();
  const tiled = stencilTiled();
  const streamed = stencilStreamed();
  return {
    residentInputs: true,
    defaultVariant: 'streamed',
    check(p) {
      if (p.input instanceof Float64Array || (isDeviceArray(p.input) && p.input.dtype !== 'f32')) throw new UnsupportedError('WebGPU has no f64; pass a Float32Array', 'input');
    },
    variants: {
      naive: (p, ctx) => runStencil(gpu, p, ctx, naive, NAIVE),
      tiled: (p, ctx) => runStencil(gpu, p, ctx, tiled, TILED_LAYOUT),
      streamed: (p, ctx) => runStencil(gpu, p, ctx, streamed, STREAMED_LAYOUT),
    },
  };
}
