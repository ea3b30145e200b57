/**
 * The chunked pipeline every op with more data than one chunk runs through: the op says what a
 * chunk is (its upload, its grid, what comes back), the pipeline owns the buffer sets, the
 * order of the work and the waits.
 *
 * Chunk i goes into buffer set i mod `sets`. Its upload waits only until that set's previous
 * chunk was read back, so with two sets the upload of chunk i runs while chunk i−1 computes and
 * is read back: the host copies into the upload staging ring while the GPU copies the finished
 * chunk out, instead of each direction idling while the other works. Device memory stays
 * bounded by `sets` chunks whatever the call's size. Each chunk's readback is gated on its own
 * passes having been accepted, so a refused pass never reaches the caller's memory.
 *
 * Chunks are read straight into the caller's `out`. The backend kit hands a runner `out` only
 * for calls without a signal (with one it writes `out` itself after the last abort check), so
 * an abort never leaves `out` partly written; a device failure half way through a call in
 * several chunks (loss, a refused pass) leaves the chunks finished before it in `out`.
 */
import { InvalidArgumentError, throwIfAborted } from '@kernelkit/core';
import type { Dispatch, GpuDevice, ReadRegion } from './device.js';
import { TimestampTimer } from './timestamps.js';
import type { GridPart } from './usage.js';

/**
 * Target bytes per chunk (of a chunk's input or output, whichever is larger). On the H100 host
 * overlapped convLayer chunks of about this size beat one pass and bigger chunks end to end
 * (benchmarks/results/webgpu-conv-layer-chunks-h100-2026-11-22.json).
 */
export const PIPELINE_CHUNK_BYTES = 32 << 20;

/** Buffer sets in flight: two are enough for every transfer to overlap the other direction's. */
export const PIPELINE_SETS = 2;

/** Test hook (installed by `@kernelkit/webgpu/testing`): a smaller chunk target, so test-sized calls run as many chunks. */
const chunkBytesHooks = new WeakMap<GpuDevice, number>();

export function setPipelineChunkBytes(gpu: GpuDevice, bytes: number | undefined): void {
  if (bytes === undefined) chunkBytesHooks.delete(gpu);
  else chunkBytesHooks.set(gpu, bytes);
}

/** Bytes one chunk aims at on `gpu`, never more than one storage binding. */
export function chunkBytesOf(gpu: GpuDevice): number {
  return Math.min(gpu.limits.storageBinding, chunkBytesHooks.get(gpu) ?? PIPELINE_CHUNK_BYTES);
}

/** One chunk's compute: a pipeline over a grid cut into parts, grouped into submits (runtime/usage.ts). */
export interface ChunkWork {
  readonly pipeline: GPUComputePipeline;
  readonly submits: readonly (readonly GridPart[])[];
  /** The bind group of one part; per-part buffers (params uniforms) go onto `temps`, released once the chunk is done. */
  bind(part: GridPart, temps: GPUBuffer[]): GPUBindGroup;
}

/** What an op tells the pipeline; `S` is the op's buffer set (device buffers for one chunk). */
export interface ChunkedJob<S> {
  readonly chunks: number;
  /** Buffer sets; 1 runs each chunk's upload, compute and readback before the next chunk's upload. */
  readonly sets: number;
  createSet(): S;
  releaseSet(set: S): void;
  /** Writes chunk i's host input into the set (through `gpu.write`); resolves once it is queued. */
  upload(set: S, chunk: number, signal: AbortSignal | undefined): Promise<void>;
  work(set: S, chunk: number): ChunkWork;
  /** Device-to-device copies before the chunk's first pass (a resident input) or after its last (a device output). */
  encodeBefore?(enc: GPUCommandEncoder, set: S, chunk: number): void;
  encodeAfter?(enc: GPUCommandEncoder, set: S, chunk: number): void;
  /** Regions read back to host memory after the chunk's passes, each with its `into`. */
  reads(set: S, chunk: number): readonly ReadRegion[];
  /** Called once chunk i is complete (read back), in order. */
  done?(chunk: number): void;
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
 * Runs `job` inside the caller's exclusive section. Kernel time: GPU timestamps per chunk where
 * the adapter has them (undefined when a chunk needed several submits: a pair brackets one
 * pass); without them a timed call runs its chunks one after another and takes the wall clock
 * of each submit with the queue otherwise idle.
 */
export async function runChunked<S>(gpu: GpuDevice, job: ChunkedJob<S>, options: PipelineOptions): Promise<{ kernelMs: number | undefined }> {
  if (!Number.isInteger(job.sets) || job.sets < 1) throw new InvalidArgumentError('sets', `must be an integer of at least 1, got ${job.sets}`);
  const { signal } = options;
  const device = gpu.device;
  const stamps = options.timing && gpu.hasTimestamps;
  const wallClock = options.timing && !gpu.hasTimestamps;
  const sets = wallClock ? 1 : Math.min(job.sets, Math.max(1, job.chunks));
  const slots: Slot<S>[] = Array.from({ length: sets }, () => ({ set: undefined, temps: [], timer: undefined, pending: undefined }));
  let kernelMs: number | undefined = options.timing ? 0 : undefined;
  let failed = true;
  try {
    if (stamps && (options.warmUp ?? true)) await gpu.warmUpClocks();
    for (let i = 0; i < job.chunks; i++) {
      const slot = slots[i % sets]!;
      if (slot.pending !== undefined) await slot.pending;
      slot.pending = undefined;
      gpu.release(...slot.temps.splice(0));
      throwIfAborted(signal);
      const set = (slot.set ??= job.createSet());
      await job.upload(set, i, signal);
      const work = job.work(set, i);
      const timer = stamps && work.submits.length === 1 ? (slot.timer ??= new TimestampTimer(device)) : undefined;
      if (stamps && timer === undefined) kernelMs = undefined;
      let checked: Promise<void> = Promise.resolve();
      for (let j = 0; j < work.submits.length; j++) {
        const first = j === 0;
        const last = j === work.submits.length - 1;
        const dispatches: Dispatch[] = work.submits[j]!.map((part) => ({ pipeline: work.pipeline, bindGroup: work.bind(part, slot.temps), workgroups: part.workgroups }));
        if (wallClock) await gpu.race(device.queue.onSubmittedWorkDone());
        const t0 = performance.now();
        checked = gpu.submitChecked(() => {
          const enc = device.createCommandEncoder();
          if (first) job.encodeBefore?.(enc, set, i);
          gpu.encodePass(enc, dispatches, timer?.writes());
          timer?.resolve(enc);
          if (last) job.encodeAfter?.(enc, set, i);
          return [enc.finish()];
        });
        if (!last || wallClock) {
          // Awaited so that an abort is seen between submits (each about SUBMIT_MS of work).
          await gpu.race(device.queue.onSubmittedWorkDone());
          if (wallClock && kernelMs !== undefined) kernelMs += performance.now() - t0;
          await checked;
          if (!last) throwIfAborted(signal);
        }
      }
      const ready = checked;
      const reads = job.reads(set, i);
      slot.pending = (async () => {
        // Gated on the passes: a refused one never reaches the caller's memory.
        for (const r of reads) await gpu.read(r.buffer, r.offset, r.size, r.into!, signal, ready);
        await ready;
        if (timer !== undefined) {
          const ms = await timer.read(gpu);
          kernelMs = kernelMs === undefined || ms === undefined ? undefined : kernelMs + ms;
          // That readback waited behind this chunk's pass.
          if (reads.length > 0 && ms !== undefined) gpu.clock.waitedForKernel(ms);
        }
        job.done?.(i);
      })();
      // Awaited before the slot is reused or at the end; until then a rejection must not count as unhandled.
      slot.pending.catch(() => {});
    }
    for (const s of slots) if (s.pending !== undefined) await s.pending;
    // Nothing read back (a device output, a sweep run): wait here for the work, whose errors and time belong to this call.
    await gpu.race(device.queue.onSubmittedWorkDone());
    failed = false;
  } finally {
    if (failed) await Promise.allSettled(slots.map((s) => s.pending ?? Promise.resolve()));
    for (const s of slots) {
      gpu.release(...s.temps);
      if (s.set !== undefined) job.releaseSet(s.set);
      s.timer?.destroy();
    }
  }
  return { kernelMs };
}

