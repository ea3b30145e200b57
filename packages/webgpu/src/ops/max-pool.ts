/**
 * Max pooling on a WebGPU DeviceArray, so a CNN's pooling between two conv layers stays on the
 * GPU (conv layer → pool → conv layer without a readback). Not one of the five ops: a helper
 * for chaining, taking and returning handles of the backend that made the input.
 */
import { assertInteger, assertObject, InvalidArgumentError } from '@kernelkit/core';
import { isDeviceArray, type DeviceArray } from '@kernelkit/ops';
import { gpuArrayContext, gpuDeviceArray, residentBuffer } from '../runtime/device-array.js';
import { packParams } from '../runtime/params.js';
import type { Program } from '../runtime/program.js';
import { grid1d, LINEAR_WG } from '../runtime/usage.js';

export interface MaxPoolShape {
  /** Independent `[height][width]` planes (batch × channels). */
  readonly planes: number;
  readonly height: number;
  readonly width: number;
  /** Window side and stride. */
  readonly window: number;
}

/** Output side in ceil mode: the last window may hang over the edge and covers only the pixels that exist. */
export const pooledSide = (n: number, window: number): number => Math.ceil(n / window);

// -inf comes in as bits through the uniform (WGSL has no infinity literal and rejects a constant
// that evaluates to one); `v > m` skips NaN, as the CPU pool does.
const POOL: Program = {
  name: 'max-pool',
  cacheKey: 'max-pool',
  workgroupSize: [256, 1, 1],
  wgsl: `
struct P { planes: u32, h: u32, w: u32, oh: u32, ow: u32, win: u32, ninf: u32, pad1: u32 }
@group(0) @binding(0) var<storage, read> inp: array<f32>;
@group(0) @binding(1) var<storage, read_write> outp: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  ${LINEAR_WG}
  let i = wg * 256u + li;
  if (i >= p.planes * p.oh * p.ow) { return; }
  let x = i % p.ow; let y = (i / p.ow) % p.oh; let n = i / (p.ow * p.oh);
  let y1 = min(y * p.win + p.win, p.h); let x1 = min(x * p.win + p.win, p.w);
  var m = bitcast<f32>(p.ninf);
  for (var yy = y * p.win; yy < y1; yy++) {
    let row = (n * p.h + yy) * p.w;
    for (var xx = x * p.win; xx < x1; xx++) { let v = inp[row + xx]; if (v > m) { m = v; } }
  }
  outp[i] = m;
}`,
};

/**
 * `window`×`window` max pooling with stride `window`, ceil mode, of a live WebGPU DeviceArray
 * holding `[planes][height][width]` f32. Resolves with a new DeviceArray of the same backend
 * (the caller disposes both) once the GPU has finished it. The input is taken when the call is
 * made: disposing it right after is safe.
 */
export function maxPoolDevice(input: DeviceArray<Float32Array>, shape: MaxPoolShape): Promise<DeviceArray<Float32Array>> {
  if (!isDeviceArray(input)) return Promise.reject(new InvalidArgumentError('input', 'expected a WebGPU DeviceArray (a call with output: "device")'));
  try {
    assertObject(shape, 'shape');
    assertInteger(shape.planes, 'shape.planes', 1);
    assertInteger(shape.height, 'shape.height', 1);
    assertInteger(shape.width, 'shape.width', 1);
    assertInteger(shape.window, 'shape.window', 1);
    const n = shape.planes * shape.height * shape.width;
    if (input.dtype !== 'f32' || input.length !== n) throw new InvalidArgumentError('input', `expected ${n} f32 (planes*height*width), got ${input.length} ${input.dtype}`);
    const { gpu, make } = gpuArrayContext(input, 'input');
    // Now, not inside the queued section: a dispose of `input` after this call queues its release behind it.
    const src = residentBuffer(gpu, input, 'input');
    const oh = pooledSide(shape.height, shape.window);
    const ow = pooledSide(shape.width, shape.window);
    const m = shape.planes * oh * ow;
    return gpu.exclusive(async () => {
      const pipeline = gpu.pipeline(POOL);
      const out = gpu.storage(m * 4);
      const params = gpu.uniform(packParams([['u32', shape.planes], ['u32', shape.height], ['u32', shape.width], ['u32', oh], ['u32', ow], ['u32', shape.window], ['u32', 0xff800000]]));
      const bindGroup = gpu.bind(pipeline, [{ buffer: src, size: n * 4 }, { buffer: out, size: m * 4 }, params]);
      await gpu.execute([{ pipeline, bindGroup, workgroups: grid1d(Math.ceil(m / 256), gpu.limits.workgroupsPerDimension) }]);
      gpu.release(params);
      return gpuDeviceArray(gpu, make, out, m);
    });
  } catch (e) {
    return Promise.reject(e);
  }
}
