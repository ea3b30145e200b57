import { LimitExceededError, throwIfAborted, UnsupportedError } from '@kernelkit/core';
import { isDeviceArray, type OpContext, type OpOutput, type ResidentOpImplementation, type ResidentProblem } from '@kernelkit/ops';
import { copyBuffer, gpuDeviceArray, residentBuffer } from '../runtime/device-array.js';
import type { Dispatch, GpuDevice } from '../runtime/device.js';
import { packParams } from '../runtime/params.js';
import type { Program } from '../runtime/program.js';
import { gridParts } from '../runtime/usage.js';
import { STREAMED, stencilNaive, stencilStreamed, stencilTiled, TILED } from './stencil3d.wgsl.js';
import { addMs, bytesOf, callTimes, workPerSubmit, type WorkRate } from './common.js';

type Problem = ResidentProblem<'stencil3d'>;

/** How a variant covers the grid: its workgroups, the cells each updates per step, and its rate in cell updates per ms (low estimates, see WorkRate). */
interface Layout {
  readonly workgroups: (p: Problem) => [number, number, number];
  readonly groupCells: number;
  readonly rate: WorkRate;
}

/**
 * The input is a host array (uploaded into a buffer the steps may overwrite) or this backend's
 * own DeviceArray (read, never written: the steps ping-pong between two other buffers). With
 * `output: 'device'` the last grid stays on the GPU as the returned handle.
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
  if (n * 4 > gpu.limits.storageBinding) throw new LimitExceededError('input', `a ${p.nx}×${p.ny}×${p.nz} grid (${n * 4} bytes) is larger than one storage binding (${gpu.limits.storageBinding} bytes)`);
  return gpu.exclusive(async () => {
    const resident = isDeviceArray(input);
    const src = resident ? residentBuffer(gpu, input, 'input') : await gpu.upload(input as Float32Array, 0, ctx.signal);
    const handle = (buffer: GPUBuffer) => gpuDeviceArray(gpu, ctx.deviceArray, buffer, n);
    if (p.steps === 0) {
      if (toDevice && !resident) return { data: handle(src), ...callTimes(gpu, 0) };
      if (toDevice) {
        const copy = gpu.storage(n * 4);
        copyBuffer(gpu, src, 0, copy, 0, n * 4);
        return { data: handle(copy), ...callTimes(gpu, 0) };
      }
      const out = (ctx.out as Float32Array | undefined) ?? gpu.output(Float32Array, n);
      await gpu.execute([], [{ buffer: src, offset: 0, size: n * 4, into: bytesOf(out, 0, n) }]);
      return { data: out, ...callTimes(gpu, 0) };
    }
    const pipeline = gpu.pipeline(program);
    const b = gpu.storage(n * 4);
    // A host input's upload is ours to overwrite; a resident input is the caller's.
    const c = resident ? gpu.storage(n * 4) : src;
    // The grid in parts within the device's per-dimension limit, each part small enough for one submit.
    const maxGroups = workPerSubmit(gpu, layout.rate) / layout.groupCells;
    const parts = gridParts(layout.workgroups(p), gpu.limits.workgroupsPerDimension, maxGroups);
    const params = parts.map((part) =>
      gpu.uniform(
        packParams([
          ['u32', p.nx],
          ['u32', p.ny],
          ['u32', p.nz],
          ['u32', p.boundary === 'copy' ? 1 : 0],
          ['f32', p.c0],
          ['f32', p.c1],
          ['u32', part.offset[0]],
          ['u32', part.offset[1]],
          ['u32', part.offset[2]],
        ]),
      ),
    );
    const bind = (from: GPUBuffer, to: GPUBuffer) => params.map((u) => gpu.bind(pipeline, [{ buffer: from, size: n * 4 }, { buffer: to, size: n * 4 }, u]));
    const first = bind(src, b);
    const bc = bind(b, c);
    const cb = resident ? bind(c, b) : first;
    const last = p.steps % 2 === 1 ? b : c;
    const spare = last === b ? c : b;
    const out = toDevice ? undefined : ((ctx.out as Float32Array | undefined) ?? gpu.output(Float32Array, n));
    const reads = out === undefined ? [] : [{ buffer: last, offset: 0, size: n * 4, into: bytesOf(out, 0, n) }];
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
      const r = await gpu.execute(dispatches, done ? reads : [], ctx.timing, submits++ === 0, ctx.signal);
      kernelMs = addMs(kernelMs, r.kernelMs);
      if (!done) throwIfAborted(ctx.signal);
    }
    gpu.release(...params);
    if (out === undefined) {
      gpu.release(spare);
      return { data: handle(last), ...callTimes(gpu, kernelMs) };
    }
    gpu.release(b, c);
    return { data: out, ...callTimes(gpu, kernelMs) };
  });
}

/** Low estimates (see WorkRate): llvmpipe on two cores gets about twice these; the tiled kernel's barriers cost most there. */
const NAIVE: Layout = { workgroups: (q) => [Math.ceil((q.nx * q.ny * q.nz) / 256), 1, 1], groupCells: 256, rate: { software: 2.5e4, hardware: 2e8 } };
const TILED_LAYOUT: Layout = {
  workgroups: (q) => [Math.ceil(q.nx / TILED.tx), Math.ceil(q.ny / TILED.ty), Math.ceil(q.nz / TILED.tz)],
  groupCells: TILED.tx * TILED.ty * TILED.tz,
  rate: { software: 5e3, hardware: 1e8 },
};
const STREAMED_LAYOUT: Layout = {
  workgroups: (q) => [Math.ceil(q.nx / STREAMED.tx), Math.ceil(q.ny / STREAMED.ty), Math.ceil(q.nz / STREAMED.zb)],
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
