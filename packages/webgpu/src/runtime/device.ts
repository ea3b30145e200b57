import { DeviceError, KEEP_BYTES, KernelkitError, LimitExceededError, markGlStackStarted, RESULT_MIN_BYTES, ResultArrays, type ResultCtor, type ResultMemoryStats } from '@kernelkit/core';
import type { AdapterInfo } from '@kernelkit/ops';
import { reopenAdapter, type OpenedAdapter } from './adapter.js';
import { POOL_IDLE_BYTES, type BufferPool } from './buffer-pool.js';
import { deviceRequest, Generation, type DeviceRequest } from './generation.js';
import { BufferLedger } from './ledger.js';
import type { Program } from './program.js';
import { prefault, PREFAULT_MIN_BYTES } from './fresh-output.js';
import type { Landing } from './landing.js';
import { markDeviceLoss } from './shards.js';
import { DEFAULT_STAGING, SMALL_WRITE_BYTES, TransferClock, type StagingShape } from './transfer.js';
import { BUF } from './usage.js';

/** Default clock warm-up before a timed pass, in ms of full-clock FMA work (chosen from the ramp measurement of apps/studies webgpu/ceilings.js). */
export const DEFAULT_WARMUP_MS = 60;

export interface Dispatch {
  readonly pipeline: GPUComputePipeline;
  readonly bindGroup: GPUBindGroup;
  readonly workgroups: readonly [number, number, number];
}

/** A region to copy back after the dispatches, through the staging ring. */
export interface ReadRegion {
  readonly buffer: GPUBuffer;
  readonly offset: number;
  readonly size: number;
  /**
   * Where the bytes go, copied straight from the mapped staging slices (`size` bytes; the
   * region's `data` entry is then empty): the op's output, so no second copy is made. Without
   * it they come back as a new ArrayBuffer.
   */
  readonly into?: Uint8Array;
}

export type Binding = GPUBuffer | { readonly buffer: GPUBuffer; readonly offset?: number; readonly size?: number };

/** What the testing counters read (see `@kernelkit/webgpu/testing`). */
export interface GpuDeviceStats {
  /** GPUBuffers created and not destroyed, over every device generation: handed out + idle + owned. */
  readonly liveBuffers: number;
  readonly idleBuffers: number;
  readonly ownedBuffers: number;
  /** Handed out to a call or a DeviceArray and not given back: 0 when no call runs and no handle holds one. */
  readonly outBuffers: number;
  readonly pipelines: number;
  /** 1 for the first device, +1 per recreation after a loss. */
  readonly generation: number;
  readonly usable: boolean;
  /** Whether the Dawn create() object is still referenced (false after destroy: the process can exit). */
  readonly holdsInstance: boolean;
  /** Exclusive calls run on this device so far (a sharded op call makes one per shard it takes). */
  readonly calls: number;
}

/**
 * Stands in for the recreation of a lost device: gets the real one, may call it or fail instead.
 * Installed by `@kernelkit/webgpu/testing` (no entry of the package exports this module), so the
 * failure paths can be driven without a field on the device for tests.
 */
export type RecreateHook = (recreate: () => Promise<GPUDevice>) => Promise<GPUDevice>;
const recreateHooks = new WeakMap<GpuDevice, RecreateHook>();

export function setRecreateHook(gpu: GpuDevice, hook: RecreateHook | undefined): void {
  if (hook === undefined) recreateHooks.delete(gpu);
  else recreateHooks.set(gpu, hook);
}

/**
 * Rewrites the dispatches of the next passes (tests: a pass WebGPU refuses, to check that a
 * failed pass never reaches the caller's `out`). Installed by `@kernelkit/webgpu/testing`.
 */
export type PassHook = (dispatches: readonly Dispatch[]) => readonly Dispatch[];
const passHooks = new WeakMap<GpuDevice, PassHook>();

export function setPassHook(gpu: GpuDevice, hook: PassHook | undefined): void {
  if (hook === undefined) passHooks.delete(gpu);
  else passHooks.set(gpu, hook);
}

/** The error for what an error scope caught: out of memory is a LimitExceededError, anything else a DeviceError. */
const isOutOfMemory = (e: GPUError): boolean => e.constructor.name === 'GPUOutOfMemoryError';

function scopeFailure(errors: readonly GPUError[], cause?: unknown): Error {
  const msg = errors.map((e) => e.message).join('\n');
  if (errors.some(isOutOfMemory)) return new LimitExceededError('device memory', `the GPU ran out of memory: ${msg} (the backend's idle buffers were released)`);
  return new DeviceError(`WebGPU rejected a command: ${msg}`, cause === undefined ? undefined : { cause });
}

/** How long a failed call waits for a pending device loss to land, so the loss is what it reports. */
const LOSS_SETTLE_MS = 50;

/** Waits until `lost` settles or LOSS_SETTLE_MS pass, and clears its timer: a disposed backend leaves nothing pending. */
async function lossSettled(lost: Promise<unknown>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([lost.catch(() => {}), new Promise((r) => (timer = setTimeout(r, LOSS_SETTLE_MS)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One logical device for a backend: the current GPUDevice generation (its pipeline cache,
 * buffer pool, timestamp timer) and the buffer ledger. Op calls run one at a time
 * (`exclusive`) because error scopes are a device-wide stack.
 *
 * Device-loss policy. A call in flight when the device is lost rejects with DeviceError (every
 * GPU wait is raced against `device.lost`, so it never hangs) and the lost generation is
 * retired at once: its buffers are destroyed, its pipelines dropped, none is ever reused. The
 * next call (or a call already queued) recreates the device lazily, from a fresh adapter of
 * the same create() object that must describe itself as the first one did, with the same
 * limits and features, and runs there; backend.ts adds "the WebGPU device was lost (…) and
 * recreated" to the notes of each call that ran after the recreation it waited for. If the
 * recreation fails, the backend is unusable: that call and every later one reject with the
 * same DeviceError; `destroy()` (dispose) still works. While the backend is being disposed a
 * lost device is not recreated.
 */
export class GpuDevice {
  readonly info: AdapterInfo;
  readonly limits: { storageBinding: number; bufferSize: number; workgroupStorage: number; invocations: number; workgroupsPerDimension: number };
  readonly subgroups: boolean;
  readonly ledger = new BufferLedger();
  /** Holds the create() object: it must be dropped (see destroy) for the process to exit. */
  private opened: OpenedAdapter | undefined;
  private readonly request: DeviceRequest;
  private gen: Generation;
  private warmUpMs = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private calls = 0;
  private closing = false;
  private unusable: DeviceError | undefined;
  private readonly recoveries: string[] = [];
  private stagingShape: StagingShape;
  /** Upload and readback wall time of the call now running (reset when each exclusive call starts). */
  readonly clock = new TransferClock();
  /** Whether large outputs get their pages faulted in by worker threads (runtime/fresh-output.ts); not on software adapters, whose kernels use every core. */
  prefaultOutputs: boolean;
  /** The outputs `output` hands out, on memory reused once callers drop them. */
  private results = new ResultArrays(RESULT_MIN_BYTES, KEEP_BYTES);

  private constructor(opened: OpenedAdapter, request: DeviceRequest, device: GPUDevice) {
    this.opened = opened;
    this.request = request;
    this.info = opened.info;
    const limits = device.limits;
    this.limits = {
      storageBinding: Number(limits.maxStorageBufferBindingSize),
      bufferSize: Number(limits.maxBufferSize),
      workgroupStorage: limits.maxComputeWorkgroupStorageSize,
      invocations: limits.maxComputeInvocationsPerWorkgroup,
      workgroupsPerDimension: limits.maxComputeWorkgroupsPerDimension,
    };
    this.subgroups = device.features.has('subgroups');
    this.stagingShape = opened.info.software ? DEFAULT_STAGING.software : DEFAULT_STAGING.hardware;
    this.prefaultOutputs = !opened.info.software;
    this.gen = this.generation(1, device);
  }

  /** `clockWarmUpMs`: FMA spin before each timed pass (see clock-warmup.ts); default 60 on hardware, 0 on software. */
  static async open(opened: OpenedAdapter, clockWarmUpMs?: number): Promise<GpuDevice> {
    const request = deviceRequest(opened.adapter);
    // An OpenGL ES device makes the GL context that headless-gl cannot run beside (see gl-stacks in core).
    if (opened.backend === 'opengles') markGlStackStarted('dawn-opengles');
    const device = await opened.adapter.requestDevice(request);
    const gpu = new GpuDevice(opened, request, device);
    gpu.setClockWarmUp(clockWarmUpMs ?? (opened.info.software ? 0 : DEFAULT_WARMUP_MS));
    return gpu;
  }

  private generation(id: number, device: GPUDevice): Generation {
    // Retire a lost device at once (not at the next call), so its buffers stop counting; not
    // while disposing, where destroy() retires it.
    const poolIdleBytes = this.info.software ? POOL_IDLE_BYTES.software : POOL_IDLE_BYTES.hardware;
    return new Generation(id, device, this.ledger, this.stagingShape, poolIdleBytes, (g) => {
      if (!this.closing) g.retire();
    });
  }

  /** The current GPUDevice. It changes after a loss: read it inside the call that uses it. */
  get device(): GPUDevice {
    return this.gen.device;
  }

  get pool(): BufferPool {
    return this.gen.pool;
  }

  /** Sets the clock warm-up before timed passes (0 turns it off); kept across recreations. */
  setClockWarmUp(ms: number): void {
    this.warmUpMs = ms;
    this.gen.setWarmUp(ms);
  }

  get hasTimestamps(): boolean {
    return this.gen.timer !== undefined;
  }

  /**
   * Runs `fn` alone on the device inside validation/OOM/internal error scopes. `fn` may call
   * `closeScopes` once it has made every GPU command of the call: the scopes are then judged
   * while it finishes host work (a landing buffer's copy into `out`), and the promise rejects
   * when one caught an error, so that copy can wait for the verdict instead of following it.
   */
  exclusive<T>(fn: (closeScopes: () => Promise<void>) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      const gen = await this.usableGeneration();
      const d = gen.device;
      const call = ++this.calls;
      this.ledger.call = call;
      this.clock.reset();
      gen.staging.rewind();
      d.pushErrorScope('validation');
      d.pushErrorScope('out-of-memory');
      d.pushErrorScope('internal');
      let judged: Promise<GPUError[]> | undefined;
      const judge = (): Promise<GPUError[]> =>
        (judged ??= (async () => {
          const found: GPUError[] = [];
          for (let i = 0; i < 3; i++) {
            const e = await this.race(d.popErrorScope()).catch(() => null);
            if (e) found.push(e);
          }
          return found;
        })());
      const closeScopes = async (): Promise<void> => {
        const found = await judge();
        if (found.length > 0) throw scopeFailure(found);
      };
      let result: T | undefined;
      let failure: unknown;
      let failed = false;
      try {
        result = await fn(closeScopes);
      } catch (e) {
        failed = true;
        failure = e;
      }
      const errors = await judge();
      this.ledger.call = 0;
      if (!failed && errors.length === 0) return result as T;
      // A failed call skips its releases: reclaim what it took so failures cannot leak buffers.
      this.ledger.sweep(call);
      // Out of memory: drop what the pool keeps idle, so the next call has the memory to itself.
      const outOfMemory = errors.some(isOutOfMemory) || (failure instanceof LimitExceededError && failure.parameter === 'device memory');
      if (outOfMemory) gen.pool.clear();
      // Dawn may reject a map of a destroyed device before `lost` settles: let the loss land.
      if (failed && gen.lostReason === undefined && !(failure instanceof KernelkitError)) {
        await lossSettled(gen.lost);
      }
      if (gen.lostReason !== undefined) {
        throw markDeviceLoss(new DeviceError(`the WebGPU device was lost during this call (${gen.lostReason}); the next call recreates it`, { cause: failed ? failure : errors[0] }));
      }
      if (errors.length > 0) throw scopeFailure(errors, failed ? failure : undefined);
      throw failure;
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => {});
    return p;
  }

  /** The live generation, recreating a lost device first (see the policy above). */
  private async usableGeneration(): Promise<Generation> {
    if (this.unusable !== undefined) throw this.unusable;
    const old = this.gen;
    if (old.lostReason === undefined && !old.retired) return old;
    if (this.closing) throw new DeviceError(`the WebGPU device is gone (${old.lostReason ?? 'destroyed'}) and the backend is being disposed`);
    try {
      const recreate = async (): Promise<GPUDevice> => {
        if (this.opened === undefined) throw new Error('the Dawn instance was released');
        const adapter = await reopenAdapter(this.opened);
        return adapter.requestDevice(this.request);
      };
      const hook = recreateHooks.get(this);
      const device = await (hook === undefined ? recreate() : hook(recreate));
      // dispose() may have begun while the device was being requested.
      if (this.closing) {
        device.destroy();
        throw new Error('the backend is being disposed');
      }
      this.gen = this.generation(old.id + 1, device);
      this.gen.setWarmUp(this.warmUpMs);
      this.recoveries.push(`the WebGPU device was lost (${old.lostReason ?? 'destroyed'}) and recreated`);
      return this.gen;
    } catch (e) {
      this.unusable = markDeviceLoss(new DeviceError(
        `the WebGPU device was lost (${old.lostReason ?? 'destroyed'}) and could not be recreated (${(e as Error).message}); this backend is unusable: dispose it`,
        { cause: e },
      ));
      throw this.unusable;
    }
  }

  /** False once a lost device could not be recreated (or while disposing). */
  get usable(): boolean {
    return this.unusable === undefined && !this.closing;
  }

  /** Throws the unusable-backend DeviceError, if recreation failed, before any work. */
  assertUsable(): void {
    if (this.unusable !== undefined) throw this.unusable;
  }

  /** How many recreations happened so far; pass it to `recoveriesSince` later. */
  get recoveryCount(): number {
    return this.recoveries.length;
  }

  recoveriesSince(n: number): readonly string[] {
    return this.recoveries.slice(n);
  }

  /** Resolves with `p` or rejects with DeviceError when the device is lost first: no hangs. */
  race<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.gen.lost]);
  }

  pipeline(program: Program): GPUComputePipeline {
    const { pipelines, device } = this.gen;
    let p = pipelines.get(program.cacheKey);
    if (p === undefined) {
      const module = device.createShaderModule({ code: program.wgsl, label: program.name });
      p = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' }, label: program.name });
      pipelines.set(program.cacheKey, p);
    }
    return p;
  }

  bind(pipeline: GPUComputePipeline, bindings: readonly Binding[]): GPUBindGroup {
    return this.gen.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: bindings.map((b, i) => {
        // A GPUBuffer has no `buffer` property; the object form names a sub-range.
        if (!('buffer' in b)) return { binding: i, resource: { buffer: b } };
        const r: GPUBufferBinding = b.size === undefined ? { buffer: b.buffer, offset: b.offset ?? 0 } : { buffer: b.buffer, offset: b.offset ?? 0, size: b.size };
        return { binding: i, resource: r };
      }),
    });
  }

  private acquire(size: number, usage: number): GPUBuffer {
    return this.gen.pool.acquire(size, usage);
  }

  /** A pooled storage buffer holding `data` (padded to 4 bytes; at least 16 bytes), written through the staging ring. */
  async upload(data: ArrayBufferView, extraUsage = 0, signal?: AbortSignal): Promise<GPUBuffer> {
    const size = Math.max(16, Math.ceil(data.byteLength / 4) * 4);
    const buf = this.acquire(size, BUF.STORAGE | BUF.COPY_DST | BUF.COPY_SRC | extraUsage);
    try {
      await this.write(buf, 0, data, signal);
    } catch (e) {
      this.release(buf);
      throw e;
    }
    return buf;
  }

  /** Writes `data` into `buf` at byte `offset` through the staging ring (runtime/transfer.ts); resolves once it is queued. */
  write(buf: GPUBuffer, offset: number, data: ArrayBufferView, signal?: AbortSignal): Promise<void> {
    const staging = this.gen.staging;
    return this.clock.uploads.during(() => staging.write(buf, offset, data, signal));
  }

  /**
   * Copies `size` bytes of `buf` from byte `offset` into `into` through the staging ring, after
   * everything submitted so far; with `ready`, `into` is written only once it resolved (and
   * never if it rejects).
   */
  read(buf: GPUBuffer, offset: number, size: number, into: Uint8Array, signal?: AbortSignal, ready?: Promise<void>): Promise<void> {
    const staging = this.gen.staging;
    return this.clock.readbacks.during(() => staging.read(buf, offset, size, into, signal, ready));
  }

  /**
   * Encodes (`encode` returns the command buffers) and submits inside error scopes of their own.
   * The promise settles once WebGPU has judged the commands: it rejects with the DeviceError (or
   * LimitExceededError) a refused command gets, so a readback gated on it never copies the
   * output of a pass that did not run. Encoding errors surface at finish(), inside the scopes.
   */
  submitChecked(encode: () => readonly GPUCommandBuffer[]): Promise<void> {
    const d = this.gen.device;
    d.pushErrorScope('validation');
    d.pushErrorScope('out-of-memory');
    d.pushErrorScope('internal');
    let thrown: { error: unknown } | undefined;
    try {
      d.queue.submit(encode());
    } catch (e) {
      thrown = { error: e };
    }
    // A collection that hands dropped outputs back runs here, while the GPU works.
    this.results.collectIfDue();
    const scopes = [d.popErrorScope(), d.popErrorScope(), d.popErrorScope()];
    const checked = this.race(Promise.all(scopes)).then((found) => {
      if (thrown !== undefined) throw thrown.error;
      const errors = found.filter((e): e is GPUError => e !== null);
      if (errors.length > 0) throw scopeFailure(errors);
    });
    checked.catch(() => {});
    return checked;
  }

  /**
   * An output array of `length` elements for a readback to fill, its content undefined until
   * then: from RESULT_MIN_BYTES on, the memory of a result the caller dropped when one of its
   * size is free (already faulted in), else fresh memory that large ones have faulted in by
   * worker threads (fresh-output.ts). The backend hands it over once the call succeeded.
   */
  output<T>(ctor: ResultCtor<T>, length: number): T {
    const bytes = length * ctor.BYTES_PER_ELEMENT;
    return this.results.array(ctor, length, (kept, forCaller) => {
      if (this.prefaultOutputs && bytes >= PREFAULT_MIN_BYTES) prefault(kept, forCaller);
    });
  }

  /** After a call succeeded with `data` as its result: memory from `output` comes back once the caller's array is collected. */
  handOver(data: unknown): void {
    this.results.handOver(data);
  }

  /** Bytes of dropped results kept for reuse now (testing). */
  get keptResultBytes(): number {
    return this.results.keptBytes;
  }

  /** What the result memory has done: results taken and reused, collections prompted (testing). */
  get resultStats(): ResultMemoryStats {
    return this.results.stats;
  }

  /**
   * Drops the result memory and starts a new one, as a new backend has (testing: tells what the
   * result memory holds after large calls from what the device holds). Results already out stay valid.
   */
  replaceResultMemory(): void {
    this.results.close();
    this.results = new ResultArrays(RESULT_MIN_BYTES, KEEP_BYTES);
  }

  /** Upload and readback wall time of the call now running (see TransferClock). */
  transferTimes(): { uploadMs: number; readbackMs: number } {
    return this.clock.times();
  }

  /** Testing hook: the staging rings' shape from now on (the current rings are replaced between calls). */
  setStaging(shape: StagingShape): Promise<void> {
    return this.exclusive(async () => {
      this.stagingShape = shape;
      this.gen.staging.destroy();
      this.gen.staging = this.gen.stagingPool(shape);
    });
  }

  /**
   * The landing buffer (runtime/landing.ts), at least `bytes` large, for the call now running:
   * undefined when it is larger than this device's largest buffer, the device has no memory
   * for it, or it is already held. Its copy into host memory counts as readback time.
   */
  async landing(bytes: number): Promise<Landing | undefined> {
    if (bytes > this.limits.bufferSize) return undefined;
    const held = await this.gen.staging.landing.take(bytes);
    if (held === undefined) return undefined;
    return { ...held, copyOut: (into, ready) => this.clock.readbacks.during(() => held.copyOut(into, ready)) };
  }

  /**
   * The upload landing buffer (runtime/landing.ts), at least `bytes` large, for the call now
   * running to put its whole host input in; undefined as `landing` is. Its copy-in counts as
   * upload time.
   */
  async uploadLanding(bytes: number): Promise<Landing | undefined> {
    if (bytes > this.limits.bufferSize) return undefined;
    const held = await this.gen.staging.uploadLanding.take(bytes);
    if (held === undefined) return undefined;
    return { ...held, copyIn: (data, signal) => this.clock.uploads.during(() => held.copyIn(data, signal)) };
  }

  /** Bytes the current generation's landing buffers hold, reads and uploads (testing: bounded by the largest recent calls). */
  get landingBytes(): number {
    return this.gen.retired ? 0 : this.gen.staging.landing.bytes + this.gen.staging.uploadLanding.bytes;
  }

  /** Staging buffers alive in the current generation (at most the two rings' slices). */
  get stagingBuffers(): number {
    return this.gen.retired ? 0 : this.gen.staging.liveSlices;
  }

  /**
   * A pooled storage buffer holding a few bytes (carries, zero offsets), written at once through
   * the queue with no staging wait. Anything larger than SMALL_WRITE_BYTES goes through `upload`.
   */
  small(data: ArrayBufferView): GPUBuffer {
    if (data.byteLength > SMALL_WRITE_BYTES) throw new RangeError(`small(): ${data.byteLength} bytes is more than ${SMALL_WRITE_BYTES}; use upload()`);
    const buf = this.storage(data.byteLength);
    const padded = new Uint8Array(buf.size);
    padded.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    this.gen.device.queue.writeBuffer(buf, 0, padded);
    return buf;
  }

  storage(size: number): GPUBuffer {
    return this.acquire(Math.max(16, Math.ceil(size / 4) * 4), BUF.STORAGE | BUF.COPY_DST | BUF.COPY_SRC);
  }

  uniform(data: ArrayBuffer | ArrayBufferView): GPUBuffer {
    const bytes = ArrayBuffer.isView(data) ? data.byteLength : data.byteLength;
    const buf = this.acquire(Math.max(16, Math.ceil(bytes / 16) * 16), BUF.UNIFORM | BUF.COPY_DST);
    const view = ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
    // Dawn's Node bindings crash on a SharedArrayBuffer source: such data goes through a copy.
    this.gen.device.queue.writeBuffer(buf, 0, view.buffer instanceof SharedArrayBuffer ? view.slice() : view);
    return buf;
  }

  /** Back to the pool (see BufferPool.release: a lost device's buffers are destroyed, never pooled). */
  release(...bufs: GPUBuffer[]): void {
    for (const b of bufs) this.gen.pool.release(b);
  }

  /** Encodes `dispatches` in one compute pass on `enc` (rewritten by a test's pass hook, see setPassHook). */
  encodePass(enc: GPUCommandEncoder, dispatches: readonly Dispatch[], timestampWrites?: GPUComputePassTimestampWrites): void {
    const hook = passHooks.get(this);
    const run = hook === undefined || dispatches.length === 0 ? dispatches : hook(dispatches);
    const pass = enc.beginComputePass(timestampWrites === undefined ? {} : { timestampWrites });
    for (const d of run) {
      pass.setPipeline(d.pipeline);
      pass.setBindGroup(0, d.bindGroup);
      pass.dispatchWorkgroups(d.workgroups[0], d.workgroups[1], d.workgroups[2]);
    }
    pass.end();
  }

  /**
   * Runs the clock warm-up spin (if any) alone and waits for it, so that a timed pass after it
   * runs at full clocks and a readback behind that pass does not wait through the spin.
   */
  async warmUpClocks(): Promise<void> {
    const { device, warmUp: spin } = this.gen;
    if (spin === undefined) return;
    const first = device.createCommandEncoder();
    spin.encode(first);
    device.queue.submit([first.finish()]);
    await this.race(device.queue.onSubmittedWorkDone());
  }

  /**
   * Encodes all dispatches in one compute pass (WebGPU orders dispatches inside a pass; each is
   * its own usage scope), submits it, then reads `reads` back through the staging ring.
   * kernelMs spans the pass from its begin to its end timestamp; without timestamps (software
   * adapters) it is the wall time from the pass's submit to its completion, taken with the
   * queue idle before it.
   */
  async execute(dispatches: readonly Dispatch[], reads: readonly ReadRegion[] = [], timing = false, warmUp = true, signal?: AbortSignal): Promise<{ kernelMs: number | undefined; data: ArrayBuffer[] }> {
    const { device, timer } = this.gen;
    const timed = timing && timer !== undefined && dispatches.length > 0;
    const wallClock = timing && timer === undefined && dispatches.length > 0;
    // Long passes ramp the clocks themselves: callers with 100 ms+ passes pass warmUp = false.
    if (timed && warmUp) await this.warmUpClocks();
    const encode = (): GPUCommandBuffer[] => {
      const enc = device.createCommandEncoder();
      this.encodePass(enc, dispatches, timed ? timer.writes() : undefined);
      if (timed) timer.resolve(enc);
      return [enc.finish()];
    };
    let kernelMs: number | undefined;
    let checked: Promise<void>;
    if (wallClock) {
      await this.race(device.queue.onSubmittedWorkDone());
      const t0 = performance.now();
      checked = this.submitChecked(encode);
      await this.race(device.queue.onSubmittedWorkDone());
      kernelMs = performance.now() - t0;
    } else checked = this.submitChecked(encode);
    const kernel = timed ? timer.read(this) : Promise.resolve(kernelMs);
    kernel.catch(() => {});
    const data: ArrayBuffer[] = [];
    for (const r of reads) {
      const fresh = r.into === undefined ? new ArrayBuffer(r.size) : undefined;
      // Gated: a refused pass leaves `into` (often the caller's `out`) as it was.
      await this.read(r.buffer, r.offset, r.size, r.into ?? new Uint8Array(fresh!), signal, checked);
      data.push(fresh ?? new ArrayBuffer(0));
    }
    if (reads.length === 0 && !wallClock) await this.race(device.queue.onSubmittedWorkDone());
    await checked;
    kernelMs = await kernel;
    // The first readback waited behind the pass: that time is the kernel's, not the transfer's.
    if (timed && reads.length > 0 && kernelMs !== undefined) this.clock.waitedForKernel(kernelMs);
    return { kernelMs, data };
  }

  /** Work started inside an exclusive call that runs on after it (a stream's readback): close() waits for it. */
  private readonly outliving = new Set<Promise<unknown>>();

  /** Has close() wait for `work` (its failure stays the caller's to see). */
  outlives(work: Promise<unknown>): void {
    this.outliving.add(work);
    const done = (): void => {
      this.outliving.delete(work);
    };
    work.then(done, done);
  }

  /** Waits for queued calls and the work they left running (a lost device is not recreated meanwhile), then destroys. */
  async close(): Promise<void> {
    this.closing = true;
    await this.queue;
    await Promise.allSettled([...this.outliving]);
    const gen = this.gen;
    gen.retire();
    // Dawn's node bindings keep polling the instance for the destroyed device's events through a
    // raw pointer: dropping the create() object before the loss is delivered lets GC free the
    // instance under that poll (SIGSEGV in CallbackTaskManager::Flush).
    await lossSettled(gen.lost);
    await new Promise((r) => setImmediate(r));
    this.destroy();
  }

  /** Destroys every buffer and the device and drops the create() object so the process can exit. Idempotent. */
  destroy(): void {
    this.closing = true;
    this.results.close();
    this.gen.retire();
    this.opened = undefined;
  }

  /** Testing hook: destroys the current GPUDevice as a driver reset would lose it; resolves once the loss was observed. */
  loseDevice(): Promise<void> {
    const gen = this.gen;
    gen.device.destroy();
    return gen.lost.then(
      () => {},
      () => {},
    );
  }

  stats(): GpuDeviceStats {
    return {
      liveBuffers: this.ledger.size,
      idleBuffers: this.ledger.count('idle'),
      ownedBuffers: this.ledger.count('owned'),
      outBuffers: this.ledger.count('out'),
      pipelines: this.gen.retired ? 0 : this.gen.pipelines.size,
      generation: this.gen.id,
      usable: this.unusable === undefined && !this.closing,
      holdsInstance: this.opened !== undefined,
      calls: this.calls,
    };
  }

  get alive(): boolean {
    return this.opened !== undefined;
  }
}
