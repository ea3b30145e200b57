import { DeviceError, LimitExceededError } from '@kernelkit/core';
import type { AdapterInfo } from '@kernelkit/ops';
import type { OpenedAdapter } from './adapter.js';
import { BufferPool } from './buffer-pool.js';
import { ClockWarmUp } from './clock-warmup.js';
import type { Program } from './program.js';
import { TimestampTimer } from './timestamps.js';
import { BUF, MAP_READ } from './usage.js';

const RAISED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxStorageBuffersPerShaderStage',
] as const;

/** Default clock warm-up before a timed pass, in ms of full-clock FMA work (chosen from the ramp measurement in bench/ceilings.ts). */
export const DEFAULT_WARMUP_MS = 60;

export interface Dispatch {
  readonly pipeline: GPUComputePipeline;
  readonly bindGroup: GPUBindGroup;
  readonly workgroups: readonly [number, number, number];
}

/** A region to copy back after the dispatches (one MAP_READ staging buffer each). */
export interface ReadRegion {
  readonly buffer: GPUBuffer;
  readonly offset: number;
  readonly size: number;
}

export type Binding = GPUBuffer | { readonly buffer: GPUBuffer; readonly offset?: number; readonly size?: number };

/**
 * One device and what hangs off it: the pipeline cache, the buffer pool and the timestamp
 * timer. Op calls run one at a time (`exclusive`) because error scopes are a device-wide stack.
 */
export class GpuDevice {
  readonly device: GPUDevice;
  readonly info: AdapterInfo;
  readonly limits: { storageBinding: number; bufferSize: number; workgroupStorage: number; invocations: number };
  readonly subgroups: boolean;
  readonly pool: BufferPool;
  private readonly timer: TimestampTimer | undefined;
  private readonly pipelines = new Map<string, GPUComputePipeline>();
  private queue: Promise<unknown> = Promise.resolve();
  private lostReason: string | undefined;
  private readonly lostPromise: Promise<never>;
  private gpu: GPU | undefined;
  private warmUp: ClockWarmUp | undefined;

  private constructor(opened: OpenedAdapter, device: GPUDevice) {
    this.gpu = opened.gpu;
    this.device = device;
    this.info = opened.info;
    const l = device.limits;
    this.limits = {
      storageBinding: Number(l.maxStorageBufferBindingSize),
      bufferSize: Number(l.maxBufferSize),
      workgroupStorage: l.maxComputeWorkgroupStorageSize,
      invocations: l.maxComputeInvocationsPerWorkgroup,
    };
    this.subgroups = device.features.has('subgroups');
    this.pool = new BufferPool(device);
    this.timer = device.features.has('timestamp-query') ? new TimestampTimer(device) : undefined;
    this.lostPromise = device.lost.then((i) => {
      this.lostReason = `${i.reason}: ${i.message}`;
      throw new DeviceError(`the WebGPU device was lost (${this.lostReason})`);
    });
    // Nobody may await lostPromise; keep the rejection from becoming an unhandled one.
    this.lostPromise.catch(() => {});
    device.onuncapturederror = () => {}; // errors are collected through error scopes instead
  }

  /** `clockWarmUpMs`: FMA spin before each timed pass (see clock-warmup.ts); default 60 on hardware, 0 on software. */
  static async open(opened: OpenedAdapter, clockWarmUpMs?: number): Promise<GpuDevice> {
    const a = opened.adapter;
    const requiredLimits: Record<string, number> = {};
    for (const k of RAISED_LIMITS) requiredLimits[k] = Number(a.limits[k]);
    const requiredFeatures: GPUFeatureName[] = [];
    for (const f of ['subgroups', 'timestamp-query'] as const) if (a.features.has(f)) requiredFeatures.push(f);
    const device = await a.requestDevice({ requiredLimits, requiredFeatures });
    const gpu = new GpuDevice(opened, device);
    gpu.setClockWarmUp(clockWarmUpMs ?? (opened.info.software ? 0 : DEFAULT_WARMUP_MS));
    return gpu;
  }

  /** Sets the clock warm-up before timed passes (0 turns it off). */
  setClockWarmUp(ms: number): void {
    this.warmUp = ms > 0 && this.timer !== undefined ? new ClockWarmUp(this.device, ms) : undefined;
  }

  get hasTimestamps(): boolean {
    return this.timer !== undefined;
  }

  /** Runs `fn` alone on the device inside validation/OOM/internal error scopes. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      if (this.lostReason !== undefined) throw new DeviceError(`the WebGPU device was lost (${this.lostReason})`);
      const d = this.device;
      d.pushErrorScope('validation');
      d.pushErrorScope('out-of-memory');
      d.pushErrorScope('internal');
      let result: T | undefined;
      let failure: unknown;
      let failed = false;
      try {
        result = await fn();
      } catch (e) {
        failed = true;
        failure = e;
      }
      const errors: GPUError[] = [];
      for (let i = 0; i < 3; i++) {
        const e = await this.race(d.popErrorScope()).catch(() => null);
        if (e) errors.push(e);
      }
      if (errors.length > 0) {
        const oom = errors.some((e) => e.constructor.name === 'GPUOutOfMemoryError');
        const msg = errors.map((e) => e.message).join('\n');
        if (oom) throw new LimitExceededError('device memory', `the GPU ran out of memory: ${msg}`);
        throw new DeviceError(`WebGPU rejected a command: ${msg}`, failed ? { cause: failure } : undefined);
      }
      if (failed) throw failure;
      return result as T;
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => {});
    return p;
  }

  /** Resolves with `p` or rejects with DeviceError when the device is lost first: no hangs. */
  race<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.lostPromise]);
  }

  pipeline(program: Program): GPUComputePipeline {
    let p = this.pipelines.get(program.cacheKey);
    if (p === undefined) {
      const module = this.device.createShaderModule({ code: program.wgsl, label: program.name });
      p = this.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' }, label: program.name });
      this.pipelines.set(program.cacheKey, p);
    }
    return p;
  }

  bind(pipeline: GPUComputePipeline, bindings: readonly Binding[]): GPUBindGroup {
    return this.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: bindings.map((b, i) => {
        // A GPUBuffer has no `buffer` property; the object form names a sub-range.
        if (!('buffer' in b)) return { binding: i, resource: { buffer: b } };
        const r: GPUBufferBinding = b.size === undefined ? { buffer: b.buffer, offset: b.offset ?? 0 } : { buffer: b.buffer, offset: b.offset ?? 0, size: b.size };
        return { binding: i, resource: r };
      }),
    });
  }

  /** A pooled storage buffer holding `data` (padded to 4 bytes; at least 16 bytes). */
  upload(data: ArrayBufferView, extraUsage = 0): GPUBuffer {
    const size = Math.max(16, Math.ceil(data.byteLength / 4) * 4);
    const buf = this.pool.acquire(size, BUF.STORAGE | BUF.COPY_DST | BUF.COPY_SRC | extraUsage);
    if (data.byteLength > 0) this.writeChunked(buf, 0, data);
    return buf;
  }

  /** queue.writeBuffer in slices: Dawn stages each call in one allocation, 1.6 GB at once is too much. */
  writeChunked(buf: GPUBuffer, offset: number, data: ArrayBufferView): void {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, Math.floor(data.byteLength / 4) * 4);
    const step = 64 << 20;
    for (let o = 0; o < bytes.byteLength; o += step) this.device.queue.writeBuffer(buf, offset + o, bytes, o, Math.min(step, bytes.byteLength - o));
    const rest = data.byteLength % 4;
    if (rest !== 0) {
      const tail = new Uint8Array(4);
      tail.set(new Uint8Array(data.buffer, data.byteOffset + data.byteLength - rest, rest));
      this.device.queue.writeBuffer(buf, offset + data.byteLength - rest, tail);
    }
  }

  storage(size: number): GPUBuffer {
    return this.pool.acquire(Math.max(16, Math.ceil(size / 4) * 4), BUF.STORAGE | BUF.COPY_DST | BUF.COPY_SRC);
  }

  uniform(data: ArrayBuffer | ArrayBufferView): GPUBuffer {
    const bytes = ArrayBuffer.isView(data) ? data.byteLength : data.byteLength;
    const buf = this.pool.acquire(Math.max(16, Math.ceil(bytes / 16) * 16), BUF.UNIFORM | BUF.COPY_DST);
    this.device.queue.writeBuffer(buf, 0, ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : data);
    return buf;
  }

  release(...bufs: GPUBuffer[]): void {
    for (const b of bufs) this.pool.release(b);
  }

  /**
   * Encodes all dispatches in one compute pass (WebGPU orders dispatches inside a pass; each is
   * its own usage scope), copies `reads` to staging buffers, submits once and maps them.
   * kernelMs spans the pass from its begin to its end timestamp.
   */
  async execute(dispatches: readonly Dispatch[], reads: readonly ReadRegion[] = [], timing = false, warmUp = true): Promise<{ kernelMs: number | undefined; data: ArrayBuffer[] }> {
    const enc = this.device.createCommandEncoder();
    const timed = timing && this.timer !== undefined && dispatches.length > 0;
    // Long passes ramp the clocks themselves: callers with 100 ms+ passes pass warmUp = false.
    if (timed && warmUp) this.warmUp?.encode(enc);
    const pass = enc.beginComputePass(timed ? { timestampWrites: this.timer!.writes() } : {});
    for (const d of dispatches) {
      pass.setPipeline(d.pipeline);
      pass.setBindGroup(0, d.bindGroup);
      pass.dispatchWorkgroups(d.workgroups[0], d.workgroups[1], d.workgroups[2]);
    }
    pass.end();
    if (timed) this.timer!.resolve(enc);
    const staging = reads.map((r) => {
      const size = Math.ceil(r.size / 4) * 4;
      const s = this.device.createBuffer({ size: Math.max(4, size), usage: BUF.MAP_READ | BUF.COPY_DST });
      if (size > 0) enc.copyBufferToBuffer(r.buffer, r.offset, s, 0, size);
      return s;
    });
    this.device.queue.submit([enc.finish()]);
    const kernel = timed ? this.timer!.read(this) : Promise.resolve(undefined);
    const data = await Promise.all(
      staging.map(async (s, i) => {
        try {
          await this.race(s.mapAsync(MAP_READ));
          return s.getMappedRange().slice(0, reads[i]!.size);
        } finally {
          s.destroy();
        }
      }),
    );
    if (reads.length === 0) await this.race(this.device.queue.onSubmittedWorkDone());
    return { kernelMs: await kernel, data };
  }

  /** Destroys the device and drops the create() object so the process can exit. */
  destroy(): void {
    this.pool.clear();
    this.pipelines.clear();
    this.timer?.destroy();
    this.device.destroy();
    this.gpu = undefined;
  }

  get alive(): boolean {
    return this.gpu !== undefined;
  }
}
