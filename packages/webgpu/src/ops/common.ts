import { LimitExceededError, throwIfAborted } from '@kernelkit/core';
import type { Dispatch, GpuDevice, ReadRegion } from '../runtime/device.js';
import type { GridPart } from '../runtime/usage.js';

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

/**
 * How fast a kernel gets through its work, in the op's own units per millisecond (multiply-adds,
 * cell updates, elements), on a software adapter and on a GPU. They only size submits. The
 * software rates are low estimates (more, shorter submits: the abort bound holds on a loaded
 * machine); the hardware ones are about half of what a data-centre GPU does, so a submit there
 * is 10 ms or more of work and the gaps between submits stay negligible (a GPU ten times slower
 * waits up to a few hundred ms for an abort).
 */
export interface WorkRate {
  readonly software: number;
  readonly hardware: number;
}

/**
 * Milliseconds of work one submit may carry. An abort is checked between submits, so this
 * bounds how long it waits for the GPU (the issue asks for 100 ms, on llvmpipe too); on a GPU a
 * submit this long makes the gaps between submits negligible.
 */
export const SUBMIT_MS = 20;

/**
 * Least work a kernel's output counts for when sizing submits, in multiply-adds: a workgroup's
 * fixed costs (launch, tile loads, barriers) dominate when each output is only a few
 * multiply-adds (K = 1, one channel), and llvmpipe pays them per invocation.
 */
export const MIN_WORK_PER_OUTPUT = 32;

/** Work units one submit may carry on this adapter (at least 1). */
export function workPerSubmit(gpu: GpuDevice, rate: WorkRate): number {
  return Math.max(1, SUBMIT_MS * (gpu.info.software ? rate.software : rate.hardware));
}

/**
 * Runs a grid cut into parts (runtime/usage.ts gridParts), one submit per group of parts:
 * `bindPart` makes each part's bind group (pushing any per-part buffers onto `temps`, released
 * after its submit). Each submit but the last is awaited and followed by an abort check; the
 * last carries the readbacks, so one group is exactly one `gpu.execute` (short calls, and the
 * hardware path below its submit budget).
 */
export async function executeParts(
  gpu: GpuDevice,
  pipeline: GPUComputePipeline,
  submits: readonly (readonly GridPart[])[],
  bindPart: (part: GridPart, temps: GPUBuffer[]) => GPUBindGroup,
  reads: readonly ReadRegion[],
  timing: boolean,
  signal: AbortSignal | undefined,
  warmUp = true,
): Promise<{ kernelMs: number | undefined; data: ArrayBuffer[] }> {
  let kernelMs: number | undefined = 0;
  let data: ArrayBuffer[] = [];
  for (let i = 0; i < submits.length; i++) {
    const last = i === submits.length - 1;
    const temps: GPUBuffer[] = [];
    try {
      const dispatches: Dispatch[] = submits[i]!.map((part) => ({ pipeline, bindGroup: bindPart(part, temps), workgroups: part.workgroups }));
      const r = await gpu.execute(dispatches, last ? reads : [], timing, warmUp && i === 0, signal);
      kernelMs = addMs(kernelMs, r.kernelMs);
      data = r.data;
    } finally {
      gpu.release(...temps);
    }
    if (!last) throwIfAborted(signal);
  }
  return { kernelMs, data };
}
