/// <reference types="@webgpu/types" preserve="true" />
/**
 * Testing hooks: observe a WebGPU backend's resources and drive its failure paths (device loss,
 * validation errors). Not part of the ops; exported as `@kernelkit/webgpu/testing`.
 */
import { assertInteger, InvalidArgumentError, type ResultMemoryStats } from '@kernelkit/core';
import type { Backend, ConvLayerProblem } from '@kernelkit/ops';
import { timeConvLayerPass, type ConvLayerConfig } from './ops/conv-layer.js';
import { DEVICE_LIMITS } from './runtime/adapter.js';
import { setPassHook, setRecreateHook, type GpuDevice, type GpuDeviceStats } from './runtime/device.js';
import { processLiveBuffers } from './runtime/ledger.js';
import { setFreshOutputLanding as setFreshLandingHook, setPipelineChunkBytes as setChunkBytesHook, setUploadLanding as setUploadLandingHook } from './runtime/pipeline.js';
import { setStencilBindingBytes as setStencilBindingHook } from './ops/stencil3d.js';
import { deviceOf, devicesOf } from './runtime/registry.js';
import type { Program } from './runtime/program.js';

export type { GpuDeviceStats } from './runtime/device.js';


/**
 * GPUBuffers created and not yet destroyed: by `backend` (idle pooled ones included), or by
 * every WebGPU backend of this process when no backend is given. 0 after dispose.
 */
export function liveGpuBuffers(backend?: Backend): number {
  return backend === undefined ? processLiveBuffers() : deviceOf(backend).stats().liveBuffers;
}

/** Compute pipelines cached on the backend's current device. */
export function cachedPipelines(backend: Backend): number {
  return deviceOf(backend).stats().pipelines;
}

/** Buffers (live, idle, owned), pipelines, device generation, usability, whether the Dawn instance is held; of device `device` (option `devices`; default the first). */
export function webgpuStats(backend: Backend, device = 0): GpuDeviceStats {
  return nthDevice(backend, device).stats();
}

/** How many devices the backend opened (option `devices`). */
export function webgpuDeviceCount(backend: Backend): number {
  return devicesOf(backend).length;
}

function nthDevice(backend: Backend, device: number): GpuDevice {
  const gpus = devicesOf(backend);
  assertInteger(device, 'device', 0, gpus.length - 1);
  return gpus[device]!;
}

/**
 * Loses device `device` (option `devices`) while it encodes its next pass, as a driver reset
 * in the middle of a call would: that call's work on it rejects with a device-loss DeviceError,
 * and a sharded call hands the shard to another device.
 */
export function loseDeviceDuringNextPass(backend: Backend, device: number): void {
  const gpu = nthDevice(backend, device);
  setPassHook(gpu, (dispatches) => {
    setPassHook(gpu, undefined);
    gpu.device.destroy();
    return dispatches;
  });
}

/** The backend's current device's value of each limit the runtime raises (runtime/adapter.ts DEVICE_LIMITS). */
export function deviceLimits(backend: Backend): Record<string, number> {
  const l = deviceOf(backend).device.limits;
  const out: Record<string, number> = {};
  for (const k of DEVICE_LIMITS) out[k] = Number(l[k]);
  return out;
}

/**
 * Calls `destroy()` on the backend's current GPUDevice, as a driver reset would lose it. A call
 * in flight rejects with DeviceError; the next call recreates the device. Resolves once the
 * backend has seen the loss.
 */
export function loseDevice(backend: Backend, device = 0): Promise<void> {
  return nthDevice(backend, device).loseDevice();
}

/** Makes the next device recreation fail with `reason`, to exercise the unusable-backend path. */
export function failNextDeviceRecreation(backend: Backend, reason: string): void {
  if (typeof reason !== 'string' || reason === '') throw new InvalidArgumentError('reason', 'must be a non-empty string');
  const gpu = deviceOf(backend);
  setRecreateHook(gpu, async () => {
    setRecreateHook(gpu, undefined);
    throw new Error(reason);
  });
}

/**
 * Makes the `nth` pass from now (1: the next one) one WebGPU refuses: its first dispatch asks
 * for maxComputeWorkgroupsPerDimension + 1 workgroups in x. The op call running it rejects with
 * DeviceError; what a failed call must leave alone (the caller's `out`) can then be checked.
 */
export function failPass(backend: Backend, nth = 1, device = 0): void {
  assertInteger(nth, 'nth', 1);
  const gpu = nthDevice(backend, device);
  let left = nth;
  setPassHook(gpu, (dispatches) => {
    if (dispatches.length === 0 || --left > 0) return dispatches;
    setPassHook(gpu, undefined);
    const [first, ...rest] = dispatches;
    return [{ ...first!, workgroups: [gpu.device.limits.maxComputeWorkgroupsPerDimension + 1, 1, 1] }, ...rest];
  });
}

const NOOP: Program = {
  name: 'testing-oversized-dispatch',
  cacheKey: 'testing-oversized-dispatch',
  workgroupSize: [1, 1, 1],
  wgsl: `@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(1) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x == 0u) { o[0] = 1u; } }`,
};

/**
 * Gives the backend's staging rings (runtime/transfer.ts) `slices` slices of `sliceBytes` each
 * direction, from the next call on: small slices make test-sized arrays stream through the ring
 * in many pieces, ragged last piece included.
 */
export function setStagingShape(backend: Backend, slices: number, sliceBytes: number): Promise<void> {
  assertInteger(slices, 'slices', 1, 64);
  assertInteger(sliceBytes, 'sliceBytes', 16);
  if (sliceBytes % 16 !== 0) throw new InvalidArgumentError('sliceBytes', `must be a multiple of 16 (copy and map alignment), got ${sliceBytes}`);
  return deviceOf(backend).setStaging({ slices, sliceBytes });
}

/**
 * Whether the backend's large host outputs get their pages faulted in by worker threads while
 * the GPU works (runtime/fresh-output.ts; on by default on hardware adapters).
 */
export function setOutputPrefault(backend: Backend, on: boolean): void {
  if (typeof on !== 'boolean') throw new InvalidArgumentError('on', 'must be a boolean');
  deviceOf(backend).prefaultOutputs = on;
}

/**
 * Makes the backend's chunk pipeline (runtime/pipeline.ts) aim at `bytes` per chunk from the
 * next call on (undefined: back to the default), so test-sized conv2d and convLayer calls run
 * as many chunks: ragged last chunks, conv2d row bands with their halo rows.
 */
export function setPipelineChunkBytes(backend: Backend, bytes: number | undefined): void {
  if (bytes !== undefined) assertInteger(bytes, 'bytes', 16);
  for (const gpu of devicesOf(backend)) setChunkBytesHook(gpu, bytes);
}

/**
 * Makes stencil3d take `bytes` as the storage binding limit from the next call on (undefined:
 * back to the device's), so test-sized grids run as z-slabs with their halo planes exchanged.
 */
export function setStencilBindingBytes(backend: Backend, bytes: number | undefined): void {
  if (bytes !== undefined) assertInteger(bytes, 'bytes', 16);
  for (const gpu of devicesOf(backend)) setStencilBindingHook(gpu, bytes);
}

/**
 * Bytes of the landing buffers (runtime/landing.ts) the backend's current device holds: where a
 * chunked call puts its whole host input and gathers its chunks for `out`; at most what the
 * largest of the recent calls needed.
 */
export function landingBytes(backend: Backend): number {
  return deviceOf(backend).landingBytes;
}

/**
 * Whether calls without `out` gather their output in the landing buffer and copy it into the array
 * they return in one host copy (true), read it back through the staging ring piece by piece
 * (false), or do what FRESH_LANDING_MIN_BYTES says (undefined): for measuring both ways.
 */
export function setFreshOutputLanding(backend: Backend, on: boolean | undefined): void {
  if (on !== undefined && typeof on !== 'boolean') throw new InvalidArgumentError('on', 'must be a boolean or undefined');
  for (const gpu of devicesOf(backend)) setFreshLandingHook(gpu, on);
}

/**
 * Whether calls put their whole host input into the upload landing buffer in one copy (true,
 * whatever its size or chunk count), stage it through the ring (false), or do what
 * UPLOAD_LANDING in runtime/pipeline.ts says (undefined): for measuring both ways.
 */
export function setUploadLanding(backend: Backend, on: boolean | undefined): void {
  if (on !== undefined && typeof on !== 'boolean') throw new InvalidArgumentError('on', 'must be a boolean or undefined');
  for (const gpu of devicesOf(backend)) setUploadLandingHook(gpu, on);
}

/** Staging buffers the backend's current device holds, uploads and readbacks together (at most the two rings' slices). */
export function stagingBuffers(backend: Backend): number {
  return deviceOf(backend).stagingBuffers;
}

/**
 * Submits one dispatch of maxComputeWorkgroupsPerDimension + 1 workgroups through the same
 * path the ops use: WebGPU's validation refuses it and the promise rejects with DeviceError
 * ("WebGPU rejected a command: …"). The device stays usable.
 */
export function dispatchOversized(backend: Backend): Promise<void> {
  const gpu = deviceOf(backend);
  gpu.assertUsable();
  return gpu.exclusive(async () => {
    const pipeline = gpu.pipeline(NOOP);
    const out = gpu.storage(16);
    try {
      const x = gpu.device.limits.maxComputeWorkgroupsPerDimension + 1;
      await gpu.execute([{ pipeline, bindGroup: gpu.bind(pipeline, [out]), workgroups: [x, 1, 1] }], [{ buffer: out, offset: 0, size: 16 }]);
    } finally {
      gpu.release(out);
    }
  });
}

// ---- for the GPU-host studies (apps/studies): the device layer and kernels outside the variants

export { openAdapter, type AdapterKind } from './runtime/adapter.js';
export { GpuDevice, type Dispatch } from './runtime/device.js';
export { packParams } from './runtime/params.js';
export type { Program } from './runtime/program.js';
export { BUF, MAP_READ, grid1d } from './runtime/usage.js';
export { decoupledConfig, decoupledParams, decoupledVecScan, paddedBytes, stateBytes, tilesFor, type DecoupledConfig } from './ops/scan-decoupled.js';
export { scanStreamOnDevice } from './ops/scan-stream.js';
export { runConv2dConfig, type Conv2dConfig } from './ops/conv2d.js';
export { convLayerCandidates, describeConvLayerConfig, runConvLayerConfig, type ConvLayerConfig } from './ops/conv-layer.js';

/** Bytes of dropped results a device keeps for reuse by later outputs (GpuDevice.output). */
export function keptResultBytes(backend: Backend, device = 0): number {
  return nthDevice(backend, device).keptResultBytes;
}

/** Results a device took and reused, and collections it prompted, since its result memory was made (GpuDevice.output). */
export function resultMemoryStats(backend: Backend, device = 0): ResultMemoryStats {
  return nthDevice(backend, device).resultStats;
}

/** Gives a device a new, empty result memory, as a new backend has; results already out stay valid. */
export function replaceResultMemory(backend: Backend, device = 0): void {
  nthDevice(backend, device).replaceResultMemory();
}

/** The GpuDevice behind a backend made by createWebGpuBackend (its streaming scan, its queue). */
export function gpuDeviceOf(backend: Backend): GpuDevice {
  return deviceOf(backend);
}

/**
 * Steady-state kernel times of one conv layer config: the input uploaded once, then `reps` timed
 * passes over the whole batch with only the clock warm-up between them (what cuDNN and PyTorch
 * timings mean; the backend's per-call kernel time follows a host upload of the same data).
 */
export async function timeConvLayerResident(gpu: GpuDevice, p: ConvLayerProblem, config: ConvLayerConfig, reps: number): Promise<number[]> {
  const buffer = await gpu.exclusive(() => gpu.upload(p.input));
  try {
    const times: number[] = [];
    for (let i = 0; i < reps; i++) times.push(await timeConvLayerPass(gpu, p, buffer, config));
    return times;
  } finally {
    gpu.release(buffer);
  }
}

/** dst[i] = src[i] over `n` (uniform word 0) f32 or vec4<f32>: the bandwidth ceiling the ops are compared with. */
export function copyProgram(vec: boolean, wg: number): Program {
  const t = vec ? 'vec4f' : 'f32';
  return {
    name: `copy-${t}-${wg}`,
    cacheKey: `copy-${t}-${wg}`,
    workgroupSize: [wg, 1, 1],
    wgsl: `struct P { n: u32, a: u32, b: u32, c: u32 }
@group(0) @binding(0) var<storage, read> src: array<${t}>;
@group(0) @binding(1) var<storage, read_write> dst: array<${t}>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(${wg}) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wid.x + wid.y * nwg.x) * ${wg}u + li;
  if (i < p.n) { dst[i] = src[i]; }
}`,
  };
}
