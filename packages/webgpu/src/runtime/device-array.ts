/**
 * WebGPU DeviceArrays: a handle that owns one pooled storage buffer. The kit (packages/ops)
 * tracks the handles per backend instance and disposes them on the backend's dispose; this file
 * maps each handle to its buffer and device, reads it back and returns the buffer to the pool.
 */
import { DeviceError, InvalidArgumentError } from '@kernelkit/core';
import type { DeviceArray, OpContext } from '@kernelkit/ops';
import type { GpuDevice } from './device.js';

type MakeHandle = OpContext<Float32Array>['deviceArray'];

interface GpuArray {
  readonly gpu: GpuDevice;
  readonly buffer: GPUBuffer;
  /** The backend's handle maker: functions outside an op call (maxPoolDevice) make handles it owns through it. */
  readonly make: MakeHandle;
}

const records = new WeakMap<object, GpuArray>();

/** The 32-bit element types a WebGPU DeviceArray holds (scan keeps u32 and i32 results on the device). */
export type GpuDtype = 'f32' | 'u32' | 'i32';
type GpuData = Float32Array | Uint32Array | Int32Array;
const CTORS = { f32: Float32Array, u32: Uint32Array, i32: Int32Array } as const;

/** Copies `length` elements from `buffer` to the host, after every call queued before it. */
function readElements(gpu: GpuDevice, buffer: GPUBuffer, length: number, dtype: GpuDtype): Promise<GpuData> {
  return gpu.exclusive(async () => {
    assertAlive(gpu, buffer, 'DeviceArray');
    const r = await gpu.execute([], [{ buffer, offset: 0, size: length * 4 }]);
    return new CTORS[dtype](r.data[0]!);
  });
}

/**
 * A handle that owns `buffer` (a pooled storage buffer holding `length` elements of `dtype`,
 * f32 unless said). `make` is the call's `ctx.deviceArray`, so the handle belongs to the
 * backend instance that ran the call.
 */
export function gpuDeviceArray(gpu: GpuDevice, make: MakeHandle, buffer: GPUBuffer, length: number): DeviceArray<Float32Array>;
export function gpuDeviceArray(gpu: GpuDevice, make: MakeHandle, buffer: GPUBuffer, length: number, dtype: GpuDtype): DeviceArray<GpuData>;
export function gpuDeviceArray(gpu: GpuDevice, make: MakeHandle, buffer: GPUBuffer, length: number, dtype: GpuDtype = 'f32'): DeviceArray<GpuData> {
  const self: { h?: DeviceArray<GpuData> } = {};
  const h = make<GpuData>({
    backend: 'webgpu',
    dtype,
    length,
    location: 'device',
    read: () => readElements(gpu, buffer, length, dtype),
    // Through the queue: a call queued before the release may still read the buffer.
    release: () => {
      if (self.h !== undefined) records.delete(self.h);
      void gpu
        .exclusive(async () => {
          if (gpu.alive) gpu.release(buffer);
        })
        .catch(() => {});
    },
  });
  self.h = h;
  // A handle born disposed (its backend was disposed during the call) has released already.
  if (!h.disposed) records.set(h, { gpu, buffer, make });
  return h;
}

/** The record behind one of this device's handles; throws when it is not one. */
function recordOf(gpu: GpuDevice | undefined, h: DeviceArray, param: string): GpuArray {
  const r = records.get(h);
  if (r === undefined && h.disposed) throw new InvalidArgumentError(param, 'this webgpu DeviceArray was disposed, and its buffer freed, before the call ran');
  if (r === undefined || (gpu !== undefined && r.gpu !== gpu)) throw new DeviceError(`${param}: a DeviceArray that is not this WebGPU device's reached it (the backend kit passes only its own)`);
  return r;
}

/**
 * The buffer behind an input handle. The kit pins an input handle for the whole call, so its
 * buffer is still there even when the caller disposed the handle after making the call.
 */
export function residentBuffer(gpu: GpuDevice, h: DeviceArray, param: string): GPUBuffer {
  const { buffer } = recordOf(gpu, h, param);
  assertAlive(gpu, buffer, param);
  return buffer;
}

/** A lost device's buffers are destroyed with it (runtime/generation.ts): say so rather than hand Dawn a dead buffer. */
function assertAlive(gpu: GpuDevice, buffer: GPUBuffer, what: string): void {
  if (gpu.ledger.generationOf(buffer) === undefined) {
    throw new DeviceError(`${what}: the GPU buffer behind this webgpu DeviceArray is gone (its device was lost or destroyed); its contents cannot be recovered`);
  }
}

/** Device and handle maker of a live WebGPU handle, for work outside the op table (maxPoolDevice). */
export function gpuArrayContext(h: DeviceArray, param: string): { readonly gpu: GpuDevice; readonly make: MakeHandle } {
  if (h.disposed) throw new InvalidArgumentError(param, 'this webgpu DeviceArray has been disposed');
  const r = records.get(h);
  if (r === undefined) throw new InvalidArgumentError(param, `expected a DeviceArray made by a WebGPU backend, got one of ${h.backend} (${h.location} memory)`);
  return { gpu: r.gpu, make: r.make };
}

/** The GPUBuffer behind a live handle (tests check pool reuse with it). */
export function bufferOf(h: DeviceArray): GPUBuffer | undefined {
  return h.disposed ? undefined : records.get(h)?.buffer;
}

/** A storage buffer owned by no handle yet, for a device output of `length` f32. */
export function deviceOutput(gpu: GpuDevice, length: number): GPUBuffer {
  return gpu.storage(length * 4);
}

/** Copies `size` bytes between two buffers on the queue (ordered after every earlier submit). */
export function copyBuffer(gpu: GpuDevice, src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, size: number): void {
  const enc = gpu.device.createCommandEncoder();
  enc.copyBufferToBuffer(src, srcOffset, dst, dstOffset, size);
  gpu.device.queue.submit([enc.finish()]);
}
