/**
 * The chunked pipeline that conv2d, convLayer and the streaming scan run their chunks through:
 * the op says what a chunk is (its upload, its grid, what comes back), the pipeline owns the
 * buffer sets, the order of the work and the waits. (stencil3d and the one-call scan run their
 * own chunks or slabs, with the same host staging and output paths below.)
 *
 * Chunk i goes into buffer set i mod `sets`. Its upload waits only until that set's previous
 * chunk was read back, so with two sets the upload of chunk i runs while chunk i−1 computes and
 * is read back: the host copies into the upload staging ring while the GPU copies the finished
 * chunk out, instead of each direction idling while the other works. Device memory stays
 * bounded by `sets` chunks whatever the call's size. Each chunk's readback is gated on its own
 * passes having been accepted, so a refused pass never reaches the caller's memory. A large host
 * input instead goes whole into the device's upload landing buffer first and each chunk copies
 * its part from there on the GPU (`stageInput`, UPLOAD_LANDING below).
 *
 * A call with `out` (one chunk or several) copies each chunk's output on the GPU into the
 * device's landing buffer (runtime/landing.ts) and copies that into `out` only once every
 * chunk's pass and copy succeeded (`hostOutput`), so a device failure half way (loss, a refused
 * pass) never leaves `out` partly written. (With a signal the backend kit already hands the
 * runner no `out`.)
 */
import { copyInto, InvalidArgumentError, throwIfAborted } from '@kernelkit/core';
import type { Dispatch, GpuDevice, ReadRegion } from './device.js';
import type { Landing } from './landing.js';
import { isScratchOutput } from './shards.js';
import { TimestampTimer } from './timestamps.js';
import type { GridPart } from './usage.js';

/**
 * Target bytes per chunk (of a chunk's input or output, whichever is larger). On the H100 host
 * overlapped convLayer chunks of about this size beat one pass and bigger chunks end to end
 * (benchmarks/results/webgpu-conv-layer-chunks-h100-2026-11-22.json).
 */
export const PIPELINE_CHUNK_BYTES = 32 << 20;

/**
 * conv2d's chunk target: as large as a binding allows. Its kernel is so short beside the copies
 * that overlapping chunks gained less than the chunks cost, on the H100 host, into a fresh array
 * and into `out` (apps/studies webgpu/staging.js, benchmarks/results/webgpu-staging-h100-2026-11-24.md).
 */
export const CONV2D_CHUNK_BYTES = Number.POSITIVE_INFINITY;

/** Buffer sets in flight: two are enough for every transfer to overlap the other direction's. */
export const PIPELINE_SETS = 2;

/** Test hook (installed by `@kernelkit/webgpu/testing`): a smaller chunk target, so test-sized calls run as many chunks. */
const chunkBytesHooks = new WeakMap<GpuDevice, number>();

export function setPipelineChunkBytes(gpu: GpuDevice, bytes: number | undefined): void {
  if (bytes === undefined) chunkBytesHooks.delete(gpu);
  else chunkBytesHooks.set(gpu, bytes);
}

/**
 * Where a call's chunk outputs go: read back through the staging ring into a host array, or
 * copied on the GPU into a buffer holding the whole output (the landing buffer, or a device
 * output for `output: 'device'`). Offsets are bytes of the call's output.
 */
export type ChunkSink = { readonly host: ArrayBufferView } | { readonly buffer: GPUBuffer };

/** The readbacks that put `size` bytes of `buffer` from `offset` at byte `at` of a host sink (none for a buffer sink). */
export function sinkReads(sink: ChunkSink, buffer: GPUBuffer, offset: number, size: number, at: number): ReadRegion[] {
  if (!('host' in sink)) return [];
  return [{ buffer, offset, size, into: new Uint8Array(sink.host.buffer, sink.host.byteOffset + at, size) }];
}

/** Encodes the copy that puts `size` bytes of `buffer` from `offset` at byte `at` of a buffer sink (nothing for a host sink). */
export function encodeSinkCopy(enc: GPUCommandEncoder, sink: ChunkSink, buffer: GPUBuffer, offset: number, size: number, at: number): void {
  if ('buffer' in sink) enc.copyBufferToBuffer(buffer, offset, sink.buffer, at, size);
}

/** A typed array class a host output is made of (f32 for most ops; scan's u32, i32 or f32). */
export type HostOutputCtor<A> = { new (length: number): A; new (buffer: SharedArrayBuffer): A; readonly BYTES_PER_ELEMENT: number };

/**
 * Submits the copy that puts `size` bytes of `buffer` from `offset` at byte `at` of a buffer sink
 * (nothing for a host sink): for ops whose passes run through `gpu.execute`, which encodes no copy
 * after them; queue order puts it behind those passes.
 */
export function submitSinkCopy(gpu: GpuDevice, sink: ChunkSink, buffer: GPUBuffer, offset: number, size: number, at: number): void {
  if (!('buffer' in sink)) return;
  const enc = gpu.device.createCommandEncoder();
  encodeSinkCopy(enc, sink, buffer, offset, size, at);
  gpu.device.queue.submit([enc.finish()]);
}

/**
 * Runs `body` (which writes its chunks into the sink it is given) inside one exclusive section
 * and returns the call's host output of `length` elements of `ctor`:
 * - `out` a sharded call's own output: read straight into `out`;
 * - the caller's `out` (one chunk or several): into the landing buffer, copied into `out` once
 *   `body` succeeded (the commit point: no abort is honoured after it); where the landing
 *   buffer cannot be had (larger than the device's largest buffer, or no device memory for
 *   it) into an array of our own, copied into `out` at the end, and a note says so;
 * - no `out`: into a fresh array the caller keeps; from FRESH_LANDING_MIN_BYTES on (hardware
 *   adapters) through the landing buffer in one host copy at the end, else each chunk through the
 *   ring (or as the study hook `setFreshOutputLanding` says).
 */
export async function hostOutput<A extends ArrayBufferView & ArrayLike<number> & { readonly BYTES_PER_ELEMENT: number; set(from: ArrayLike<number>): void }, T>(
  gpu: GpuDevice,
  out: A | undefined,
  ctor: HostOutputCtor<A>,
  length: number,
  signal: AbortSignal | undefined,
  body: (sink: ChunkSink) => Promise<T>,
): Promise<{ readonly data: A; readonly result: T; readonly transfer: { uploadMs: number; readbackMs: number }; readonly note?: string }> {
  const bytes = length * ctor.BYTES_PER_ELEMENT;
  // The call's transfer times are taken at the end of its exclusive section, the commit's copy included.
  const inCall = async (sink: ChunkSink): Promise<{ result: T; transfer: { uploadMs: number; readbackMs: number } }> => ({ result: await body(sink), transfer: gpu.transferTimes() });
  const fresh = out === undefined;
  // A caller's `out` always takes the landing buffer, one chunk too: a readback straight into
  // `out` that failed half way (device loss between ring pieces) would leave it partly written.
  if ((fresh && !usesFreshLanding(gpu, bytes)) || (out !== undefined && isScratchOutput(out))) {
    const target = out ?? gpu.output(ctor, length);
    return { data: target, ...(await gpu.exclusive(() => inCall({ host: target }))) };
  }
  const into = out ?? gpu.output(ctor, length);
  const landed = await gpu.exclusive(async (closeScopes) => {
    const landing = await gpu.landing(bytes);
    if (landing === undefined) return undefined;
    try {
      const result = await body({ buffer: landing.buffer });
      throwIfAborted(signal);
      // Every GPU command is made: the error scopes are judged while the map waits for the GPU.
      const judged = closeScopes();
      judged.catch(() => {});
      await landing.copyOut(new Uint8Array(into.buffer, into.byteOffset, bytes), judged);
      return { result, transfer: gpu.transferTimes() };
    } finally {
      landing.release();
    }
  });
  if (landed !== undefined) return { data: into, ...landed };
  if (fresh) return { data: into, ...(await gpu.exclusive(() => inCall({ host: into }))) };
  const target = gpu.output(ctor, length);
  const r = await gpu.exclusive(() => inCall({ host: target }));
  copyInto(out, target);
  const why = bytes > gpu.limits.bufferSize ? "is larger than this device's largest buffer" : 'found no device memory for a landing buffer';
  return { data: out, ...r, note: `the output (${bytes} bytes) ${why}, so its chunks were read into an array of our own and copied into out` };
}

/**
 * On hardware adapters, fresh outputs at least this large are gathered in the read landing buffer
 * and copied into the returned array in one host copy once the call is done; smaller ones are read
 * back through the ring in slice-sized pieces. One large copy runs at about twice the speed of
 * 32 MiB ones there (webgpu-fresh-landing-h100-2026-11-25-s17-after.txt).
 */
export const FRESH_LANDING_MIN_BYTES = 64 << 20;

/**
 * Study hook (installed by `@kernelkit/webgpu/testing`): calls without `out` gather their output
 * in the landing buffer (true) or read it back through the ring (false) whatever their size, so
 * the two ways can be measured side by side on one device; undefined restores the default.
 */
const freshLandingHooks = new WeakMap<GpuDevice, boolean>();

export function setFreshOutputLanding(gpu: GpuDevice, on: boolean | undefined): void {
  if (on === undefined) freshLandingHooks.delete(gpu);
  else freshLandingHooks.set(gpu, on);
}

/** Whether a call without `out`, returning `bytes` of output, gathers it in the landing buffer. */
function usesFreshLanding(gpu: GpuDevice, bytes: number): boolean {
  return freshLandingHooks.get(gpu) ?? (!gpu.info.software && bytes >= FRESH_LANDING_MIN_BYTES);
}

/**
 * Whether a large host input goes into the upload landing buffer (runtime/landing.ts) in one
 * host copy, its chunks copying their parts from there on the GPU, rather than through the
 * ring in slice-sized pieces. On hardware adapters: a copy into mapped memory runs much faster
 * as one large copy than as the ring's pieces, which outweighs the extra GPU copy
 * (apps/studies webgpu/timeline.js). Software adapters copy on the CPU either way.
 */
export const UPLOAD_LANDING = true;

/** Inputs at least this large use the upload landing buffer (smaller ones take the ring: a piece or two, overlapped with the GPU's copies). */
export const UPLOAD_LANDING_MIN_BYTES = 64 << 20;

/**
 * Study hook (installed by `@kernelkit/webgpu/testing`): the upload landing on or off for one
 * device, whatever UPLOAD_LANDING says; on, it takes every host input, so that test-sized
 * one-chunk calls run that path too.
 */
const uploadLandingHooks = new WeakMap<GpuDevice, boolean>();

export function setUploadLanding(gpu: GpuDevice, on: boolean | undefined): void {
  if (on === undefined) uploadLandingHooks.delete(gpu);
  else uploadLandingHooks.set(gpu, on);
}

/** Whether a call with `bytes` of host input in `chunks` chunks stages it through the upload landing buffer. */
export function usesUploadLanding(gpu: GpuDevice, bytes: number, chunks: number): boolean {
  const hook = uploadLandingHooks.get(gpu);
  if (hook !== undefined) return hook;
  return UPLOAD_LANDING && !gpu.info.software && (chunks > 1 || bytes >= UPLOAD_LANDING_MIN_BYTES);
}

/**
 * A call's whole host input copied into the upload landing buffer, when `usesUploadLanding` says
 * so and the buffer can be had; undefined when the call stages its input through the ring. The
 * chunks then copy their parts from its buffer on the GPU (a MAP_WRITE buffer cannot be bound).
 * The caller releases it once every copy from it is submitted.
 */
export async function stageInput(gpu: GpuDevice, data: ArrayBufferView, chunks: number, signal: AbortSignal | undefined): Promise<Landing | undefined> {
  if (!usesUploadLanding(gpu, data.byteLength, chunks)) return undefined;
  const staged = await gpu.uploadLanding(data.byteLength);
  if (staged === undefined) return undefined;
  try {
    throwIfAborted(signal);
    await staged.copyIn(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), signal);
  } catch (e) {
    staged.release();
    throw e;
  }
  return staged;
}

/** Bytes one chunk aims at on `gpu` (`target` unless a test hook says otherwise), never more than one storage binding. */
export function chunkBytesOf(gpu: GpuDevice, target = PIPELINE_CHUNK_BYTES): number {
  return Math.min(gpu.limits.storageBinding, chunkBytesHooks.get(gpu) ?? target);
}

/** One chunk's compute: a pipeline over a grid cut into parts, grouped into submits (runtime/usage.ts). */
export interface ChunkWork {
  readonly pipeline: GPUComputePipeline;
  readonly submits: readonly (readonly GridPart[])[];
  /** The bind group of one part; per-part buffers (params uniforms) go onto `temps`, released once the chunk is done. */
  bind(part: GridPart, temps: GPUBuffer[]): GPUBindGroup;
}

/** One chunk, as an op describes it, on the buffer set `S` the pipeline gives it. */
export interface ChunkSteps<S> {
  /** Writes the chunk's host input into the set (through `gpu.write`); resolves once it is queued. */
  upload(set: S, signal: AbortSignal | undefined): Promise<void>;
  work(set: S): ChunkWork;
  /** Commands before the chunk's first pass (a resident input's copy, a state clear) or after its last (a device output's copy). */
  encodeBefore?(enc: GPUCommandEncoder, set: S): void;
  encodeAfter?(enc: GPUCommandEncoder, set: S): void;
  /** Regions read back to host memory after the chunk's passes, each with its `into`. */
  reads(set: S): readonly ReadRegion[];
  /** Called once the chunk is complete (read back). */
  done?(): void;
}

/** The buffer sets of a pipeline: how to make one fit for a chunk, and how to free one. */
export interface ChunkSets<S> {
  /** Buffer sets; 1 runs each chunk's upload, compute and readback before the next chunk's upload. */
  readonly sets: number;
  /** The set for a chunk: `old` (the slot's set, free again) when it fits, else a new one (releasing `old`). */
  fit(old: S | undefined): S;
  release(set: S): void;
}

export interface PipelineOptions {
  readonly timing: boolean;
  readonly signal: AbortSignal | undefined;
  /** Clock warm-up before the first timed pass (off for all but the first run of a sweep). */
  readonly warmUp?: boolean;
}

interface Slot<S> {
  set: S | undefined;
  temps: GPUBuffer[];
  timer: TimestampTimer | undefined;
  /** The readback (and timestamp read) of the chunk last submitted on this slot. */
  pending: Promise<void> | undefined;
}

/**
 * Chunks pushed one after another onto `sets` buffer sets. Kernel time: GPU timestamps per
 * chunk where the adapter has them (undefined when a chunk needed several submits: a pair
 * brackets one pass); without them a timed pipeline runs its chunks one after another and takes
 * the wall clock of each submit with the queue otherwise idle.
 */
export class ChunkPipeline<S> {
  private readonly slots: Slot<S>[];
  private readonly stamps: boolean;
  private readonly wallClock: boolean;
  private pushed = 0;
  private kernel: number | undefined;
  private warmedUp: boolean;

  constructor(
    private readonly gpu: GpuDevice,
    private readonly sets: ChunkSets<S>,
    private readonly options: PipelineOptions,
  ) {
    if (!Number.isInteger(sets.sets) || sets.sets < 1) throw new InvalidArgumentError('sets', `must be an integer of at least 1, got ${sets.sets}`);
    this.stamps = options.timing && gpu.hasTimestamps;
    this.wallClock = options.timing && !gpu.hasTimestamps;
    const n = this.wallClock ? 1 : sets.sets;
    this.slots = Array.from({ length: n }, () => ({ set: undefined, temps: [], timer: undefined, pending: undefined }));
    this.kernel = options.timing ? 0 : undefined;
    this.warmedUp = !(options.warmUp ?? true);
  }

  /** Kernel ms of the chunks completed so far (undefined without timing, or when one was not measured). */
  get kernelMs(): number | undefined {
    return this.kernel;
  }

  /**
   * Uploads and submits one chunk once its buffer set is free, and starts its readback. Resolves
   * when the chunk is submitted, with `complete`: its readback (already handled: await it, or
   * `finish`, to see its failure). Wrapped in an object: a promise resolved with a promise
   * would wait for it.
   */
  async push(steps: ChunkSteps<S>): Promise<{ readonly complete: Promise<void> }> {
    const { gpu, options } = this;
    const { signal } = options;
    const device = gpu.device;
    const slot = this.slots[this.pushed++ % this.slots.length]!;
    if (slot.pending !== undefined) await slot.pending;
    slot.pending = undefined;
    gpu.release(...slot.temps.splice(0));
    throwIfAborted(signal);
    if (this.stamps && !this.warmedUp) {
      this.warmedUp = true;
      await gpu.warmUpClocks();
    }
    const set = (slot.set = this.sets.fit(slot.set));
    await steps.upload(set, signal);
    const work = steps.work(set);
    const timer = this.stamps && work.submits.length === 1 ? (slot.timer ??= new TimestampTimer(device)) : undefined;
    if (this.stamps && timer === undefined) this.kernel = undefined;
    let checked: Promise<void> = Promise.resolve();
    for (let j = 0; j < work.submits.length; j++) {
      const first = j === 0;
      const last = j === work.submits.length - 1;
      const dispatches: Dispatch[] = work.submits[j]!.map((part) => ({ pipeline: work.pipeline, bindGroup: work.bind(part, slot.temps), workgroups: part.workgroups }));
      if (this.wallClock) await gpu.race(device.queue.onSubmittedWorkDone());
      const t0 = performance.now();
      checked = gpu.submitChecked(() => {
        const enc = device.createCommandEncoder();
        if (first) steps.encodeBefore?.(enc, set);
        gpu.encodePass(enc, dispatches, timer?.writes());
        timer?.resolve(enc);
        if (last) steps.encodeAfter?.(enc, set);
        return [enc.finish()];
      });
      if (!last || this.wallClock) {
        // Awaited so that an abort is seen between submits (each about SUBMIT_MS of work).
        await gpu.race(device.queue.onSubmittedWorkDone());
        if (this.wallClock && this.kernel !== undefined) this.kernel += performance.now() - t0;
        await checked;
        if (!last) throwIfAborted(signal);
      }
    }
    const ready = checked;
    const reads = steps.reads(set);
    const pending = (async () => {
      // Gated on the passes: a refused one never reaches the caller's memory.
      for (const r of reads) await gpu.read(r.buffer, r.offset, r.size, r.into!, signal, ready);
      await ready;
      if (timer !== undefined) {
        const ms = await timer.read(gpu);
        this.kernel = this.kernel === undefined || ms === undefined ? undefined : this.kernel + ms;
        // That readback waited behind this chunk's pass.
        if (reads.length > 0 && ms !== undefined) gpu.clock.waitedForKernel(ms);
      }
      steps.done?.();
    })();
    // Awaited before the slot is reused, by the caller or at the end; until then a rejection must not count as unhandled.
    pending.catch(() => {});
    slot.pending = pending;
    return { complete: pending };
  }

  /** Waits for every chunk and for the queue (work with nothing to read back: its errors and time belong to this call). */
  async finish(): Promise<{ kernelMs: number | undefined }> {
    for (const s of this.slots) if (s.pending !== undefined) await s.pending;
    await this.gpu.race(this.gpu.device.queue.onSubmittedWorkDone());
    return { kernelMs: this.kernel };
  }

  /** Lets every chunk settle, then releases the buffer sets and per-part buffers. Call once, after `finish` or a failure. */
  async close(): Promise<void> {
    await Promise.allSettled(this.slots.map((s) => s.pending ?? Promise.resolve()));
    for (const s of this.slots) {
      this.gpu.release(...s.temps.splice(0));
      if (s.set !== undefined) this.sets.release(s.set);
      s.set = undefined;
      s.timer?.destroy();
      s.timer = undefined;
    }
  }
}

/** A call's chunks 0…count−1 through a pipeline inside the caller's exclusive section. */
export interface CountedJob<S> {
  readonly chunks: number;
  readonly sets: number;
  createSet(): S;
  releaseSet(set: S): void;
  chunk(i: number): ChunkSteps<S>;
}

/** Runs every chunk of `job` and waits for all of them; the buffer sets are released whatever happens. */
export async function runChunked<S>(gpu: GpuDevice, job: CountedJob<S>, options: PipelineOptions): Promise<{ kernelMs: number | undefined }> {
  const pipe = new ChunkPipeline<S>(gpu, { sets: Math.min(job.sets, Math.max(1, job.chunks)), fit: (old) => old ?? job.createSet(), release: (s) => job.releaseSet(s) }, options);
  try {
    for (let i = 0; i < job.chunks; i++) await pipe.push(job.chunk(i));
    return await pipe.finish();
  } finally {
    await pipe.close();
  }
}
