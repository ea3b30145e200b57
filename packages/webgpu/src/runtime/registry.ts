import { describeValue, InvalidArgumentError } from '@kernelkit/core';
import type { Backend } from '@kernelkit/ops';
import type { GpuDevice } from './device.js';

/**
 * The device behind each backend made by createWebGpuBackend. Package-internal: no entry of the
 * package exports this module, so users reach a device only through the ops, webgpuScanStream
 * and the `./testing` hooks.
 */
const devices = new WeakMap<Backend, readonly GpuDevice[]>();

/** `gpus[0]` is the backend's first device: the one unsharded ops and streams run on. */
export function registerDevice(backend: Backend, gpus: readonly GpuDevice[]): void {
  devices.set(backend, gpus);
}

/** The backend's first device; InvalidArgumentError naming `backend` for any other value. */
export function deviceOf(backend: Backend): GpuDevice {
  return devicesOf(backend)[0]!;
}

/** Every device of the backend (option `devices`), the first one first. */
export function devicesOf(backend: Backend): readonly GpuDevice[] {
  const gpus = devices.get(backend);
  if (gpus === undefined) throw new InvalidArgumentError('backend', `not a backend made by createWebGpuBackend (got ${describeValue(backend)})`);
  return gpus;
}
