import { LimitExceededError } from '@kernelkit/core';
import type { GpuDevice } from '../runtime/device.js';

/** Items per chunk so that `bytesPerItem · items` fits one storage binding (and a dispatch dimension). */
export function itemsPerChunk(gpu: GpuDevice, bytesPerItem: number, what: string, maxItems = 65535): number {
  const n = Math.floor(gpu.limits.storageBinding / bytesPerItem);
  if (n < 1) throw new LimitExceededError(what, `one item needs ${bytesPerItem} bytes, more than this device's storage binding limit (${gpu.limits.storageBinding} bytes)`);
  return Math.min(n, maxItems);
}

/** Sums kernel times; undefined as soon as one part was not measured. */
export function addMs(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : a + b;
}

/** What an op call reports as its timing: kernel time (undefined when not measured) and transfer wall times. */
export interface CallTimes {
  readonly kernelMs: number | undefined;
  readonly uploadMs: number;
  readonly readbackMs: number;
}

/** The call's kernel time with the upload and readback times the device recorded for it: read at the end of the call's exclusive section. */
export function callTimes(gpu: GpuDevice, kernelMs: number | undefined): CallTimes {
  return { kernelMs, ...gpu.transferTimes() };
}

/** The bytes of `count` elements of `a` from element `start`: where a readback copies straight to (ReadRegion.into). */
export function bytesOf(a: ArrayBufferView & { readonly BYTES_PER_ELEMENT: number }, start: number, count: number): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset + start * a.BYTES_PER_ELEMENT, count * a.BYTES_PER_ELEMENT);
}
