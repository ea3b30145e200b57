import { describeValue, InvalidArgumentError } from '@kernelkit/core';
import type { Backend } from '@kernelkit/ops';
import type { GpuDevice } from './device.js';

/**
 * The device behind each backend made by createWebGpuBackend. Package-internal: no entry of the
 * package exports this module, so users reach a device only through the ops, webgpuScanStream
 * and the `./testing` hooks.
 */
const devices = new WeakMap<Backend, GpuDevice>();

export function registerDevice(backend: Backend, gpu: GpuDevice): void {
  devices.set(backend, gpu);
}

/** The backend's device; InvalidArgumentError naming `backend` for any other value. */
export function deviceOf(backend: Backend): GpuDevice {
  const gpu = devices.get(backend);
  if (gpu === undefined) throw new InvalidArgumentError('backend', `not a backend made by createWebGpuBackend (got ${describeValue(backend)})`);
  return gpu;
}
