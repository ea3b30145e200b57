/**
 * Testing hooks: observe a WebGPU backend's resources and drive its failure paths (device loss,
 * validation errors). Not part of the ops; exported as `@kernelkit/webgpu/testing`.
 */
import { InvalidArgumentError } from '@kernelkit/core';
import type { Backend } from '@kernelkit/ops';
import { DEVICE_LIMITS } from './runtime/adapter.js';
import { setRecreateHook, type GpuDeviceStats } from './runtime/device.js';
import { processLiveBuffers } from './runtime/ledger.js';
import { deviceOf } from './runtime/registry.js';
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

/** Buffers (live, idle, owned), pipelines, device generation, usability, whether the Dawn instance is held. */
export function webgpuStats(backend: Backend): GpuDeviceStats {
  return deviceOf(backend).stats();
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
export function loseDevice(backend: Backend): Promise<void> {
  return deviceOf(backend).loseDevice();
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

const NOOP: Program = {
  name: 'testing-oversized-dispatch',
  cacheKey: 'testing-oversized-dispatch',
  workgroupSize: [1, 1, 1],
  wgsl: `@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(1) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x == 0u) { o[0] = 1u; } }`,
};

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
