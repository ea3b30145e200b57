import { LimitExceededError, UnsupportedError } from '@kernelkit/core';
import { isDeviceArray, type OpContext, type OpOutput, type ResidentOpImplementation, type ResidentProblem } from '@kernelkit/ops';
import { copyBuffer, gpuDeviceArray, residentBuffer } from '../runtime/device-array.js';
import type { GpuDevice } from '../runtime/device.js';
import { packParams } from '../runtime/params.js';
import type { Program } from '../runtime/program.js';
import { grid1d } from '../runtime/usage.js';
import { STREAMED, stencilNaive, stencilStreamed, stencilTiled, TILED } from './stencil3d.wgsl.js';
import { bytesOf, callTimes } from './common.js';

type Problem = ResidentProblem<'stencil3d'>;
type Workgroups = (p: Problem) => [number, number, number];

/**
 * The input is a host array (uploaded into a buffer the steps may overwrite) or this backend's
 * own DeviceArray (read, never written: the steps ping-pong between two other buffers). With
 * `output: 'device'` the last grid stays on the GPU as the returned handle.
 */
async function runStencil(gpu: GpuDevice, p: Problem, ctx: OpContext<Float32Array | Float64Array>, program: Program, wg: Workgroups): Promise<OpOutput<Float32Array | Float64Array>> {
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
    const src = resident ? residentBuffer(gpu, input, 'input') : await gpu.upload(input as Float32Array);
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
    const params = gpu.uniform(packParams([['u32', p.nx], ['u32', p.ny], ['u32', p.nz], ['u32', p.boundary === 'copy' ? 1 : 0], ['f32', p.c0], ['f32', p.c1]]));
    const bind = (from: GPUBuffer, to: GPUBuffer) => gpu.bind(pipeline, [{ buffer: from, size: n * 4 }, { buffer: to, size: n * 4 }, params]);
    const first = bind(src, b);
    const bc = bind(b, c);
    const cb = resident ? bind(c, b) : first;
    // All steps ping-pong on the GPU inside one pass; only the final grid leaves it (if at all).
    const workgroups = wg(p);
    const dispatches = Array.from({ length: p.steps }, (_, s) => ({ pipeline, bindGroup: s === 0 ? first : s % 2 === 1 ? bc : cb, workgroups }));
    const last = p.steps % 2 === 1 ? b : c;
    const spare = last === b ? c : b;
    if (toDevice) {
      const r = await gpu.execute(dispatches, [], ctx.timing);
      gpu.release(spare, params);
      return { data: handle(last), ...callTimes(gpu, r.kernelMs) };
    }
    const out = (ctx.out as Float32Array | undefined) ?? gpu.output(Float32Array, n);
    const r = await gpu.execute(dispatches, [{ buffer: last, offset: 0, size: n * 4, into: bytesOf(out, 0, n) }], ctx.timing);
    gpu.release(b, c, params);
    return { data: out, ...callTimes(gpu, r.kernelMs) };
  });
}

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
      naive: (p, ctx) => runStencil(gpu, p, ctx, naive, (q) => grid1d(Math.ceil((q.nx * q.ny * q.nz) / 256))),
      tiled: (p, ctx) => runStencil(gpu, p, ctx, tiled, (q) => [Math.ceil(q.nx / TILED.tx), Math.ceil(q.ny / TILED.ty), Math.ceil(q.nz / TILED.tz)]),
      streamed: (p, ctx) => runStencil(gpu, p, ctx, streamed, (q) => [Math.ceil(q.nx / STREAMED.tx), Math.ceil(q.ny / STREAMED.ty), Math.ceil(q.nz / STREAMED.zb)]),
    },
  };
}
