/**
 * Host ↔ GPU transfers through a fixed ring of reused staging buffers: one per device generation.
 *
 * Uploads: MAP_WRITE | COPY_SRC slices, kept mapped between uses; the input is copied straight
 * into a slice's mapped range, the slice is unmapped, copied to its destination on the queue and
 * mapped again (that map resolves once the GPU copy is done). queue.writeBuffer, which copies
 * into staging Dawn allocates, takes the uploads of up to `directWriteBytes` (see DEFAULT_STAGING);
 * larger ones it moves slower than the ring on hardware.
 * Readbacks: MAP_READ | COPY_DST slices; each piece is copied into a slice, mapped, and copied
 * straight into the caller's memory.
 *
 * Anything longer than one slice streams through the ring in slice-sized pieces: while the host
 * copies piece i, the GPU copies the pieces after it. Piece k of a call takes slice k mod n and
 * waits for the slice's previous holder, so concurrent transfers (a chunked op reading one chunk
 * while writing the next) share the ring without deadlock and the ring never grows; each call
 * starts again at slice 0, so small calls keep to one slice per direction.
 *
 * The slices are created lazily, counted by the ledger as runtime-owned, and destroyed with the
 * generation (dispose or device loss): a mapped slice is never left behind. The pool also holds
 * the two whole-call landing buffers (runtime/landing.ts), which go the same way.
 */
import { AbortError, copyInto, DeviceError } from '@kernelkit/core';
import { untilTouched } from './fresh-output.js';
import { LandingPool } from './landing.js';
import type { BufferLedger } from './ledger.js';
import { BUF, MAP_READ } from './usage.js';

/** How many staging slices each direction has (uploads `uploadSlices` where given), and their size in bytes. */
export interface StagingShape {
  readonly slices: number;
  readonly sliceBytes: number;
  readonly uploadSlices?: number;
  /** Uploads of an ordinary array up to this size skip the ring for queue.writeBuffer (default SMALL_WRITE_BYTES). */
  readonly directWriteBytes?: number;
}

/**
 * Defaults: on hardware 32 MiB slices, small enough that the first piece's latency stays around
 * a millisecond; 4 for readbacks and 8 for uploads, whose pieces otherwise wait for a slice's
 * re-map while the host could be copying (apps/studies webgpu/staging.js on the H100 host:
 * 8 × 32 uploaded fastest of the ring shapes, 4 × 32 read back fastest). Software adapters move
 * bytes with the CPU anyway, so they keep less memory in staging.
 * Uploads of up to 2 MiB on hardware go through queue.writeBuffer: its copy into Dawn's own staging
 * returns sooner than a slice's unmap, copy and re-map, while from 3 MiB it is the slower way;
 * on the software adapter it is the faster way at every size measured, up to 16 MiB
 * (benchmarks/results/webgpu-small-uploads-*.txt).
 */
export const DEFAULT_STAGING: { readonly hardware: StagingShape; readonly software: StagingShape } = {
  hardware: { slices: 4, sliceBytes: 32 << 20, uploadSlices: 8, directWriteBytes: 2 << 20 },
  software: { slices: 4, sliceBytes: 4 << 20, directWriteBytes: 16 << 20 },
};

/** Uploads up to this size go through queue.writeBuffer (params, filters, weights): no slice wait, no extra submit. */
export const SMALL_WRITE_BYTES = 64 << 10;

/** Where a call's wall time went; reset at the start of each exclusive call (see GpuDevice.exclusive). */
export class TransferClock {
  private upload = new BusyTime();
  private readback = new BusyTime();
  /** Kernel time the readback waited through (its copies queue behind the pass). */
  private kernelInReadback = 0;

  reset(): void {
    this.upload = new BusyTime();
    this.readback = new BusyTime();
    this.kernelInReadback = 0;
  }

  get uploads(): BusyTime {
    return this.upload;
  }

  get readbacks(): BusyTime {
    return this.readback;
  }

  /** Says that the readback just timed first waited for `ms` of kernel. */
  waitedForKernel(ms: number): void {
    this.kernelInReadback += ms;
  }

  /** Wall ms spent uploading, and reading back less the kernel time those reads waited through. */
  times(): { uploadMs: number; readbackMs: number } {
    return { uploadMs: this.upload.ms(), readbackMs: Math.max(0, this.readback.ms() - this.kernelInReadback) };
  }
}

/** Wall time during which at least one transfer of a kind was under way (overlapping ones count once). */
export class BusyTime {
  private active = 0;
  private since = 0;
  private total = 0;

  async during<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active++ === 0) this.since = performance.now();
    try {
      return await fn();
    } finally {
      if (--this.active === 0) this.total += performance.now() - this.since;
    }
  }

  ms(): number {
    return this.active > 0 ? this.total + performance.now() - this.since : this.total;
  }
}

interface Slice {
  buffer: GPUBuffer | undefined;
  /** Resolves when the previous holder is done with the slice. */
  free: Promise<void>;
  /** Upload slices: the pending mapAsync(WRITE), raced against device loss. */
  mapped: Promise<void> | undefined;
}

/** Hooks into the owning device: loss racing and ownership accounting. */
export interface TransferHost {
  readonly device: GPUDevice;
  readonly ledger: BufferLedger;
  /** Resolves with `p` or rejects with DeviceError when the device is lost first. */
  race<T>(p: Promise<T>): Promise<T>;
}

/** One direction's ring of staging slices. */
class Ring {
  private readonly slices: Slice[];
  private next = 0;

  constructor(
    private readonly host: TransferHost,
    private readonly usage: number,
    readonly shape: StagingShape,
  ) {
    this.slices = Array.from({ length: shape.slices }, () => ({ buffer: undefined, free: Promise.resolve(), mapped: undefined }));
  }

  /**
   * Starts the next call's pieces at the first slice: a call that moves one piece each way keeps
   * reusing one slice per direction instead of creating the whole ring over its first calls
   * (a mapped slice costs tens of ms to create on some hardware).
   */
  rewind(): void {
    this.next = 0;
  }

  /** Runs `fn` on the next slice in ring order once its previous holder is done. */
  async take<T>(fn: (s: Slice) => Promise<T>): Promise<T> {
    const slice = this.slices[this.next]!;
    this.next = (this.next + 1) % this.slices.length;
    const previous = slice.free;
    let release!: () => void;
    slice.free = new Promise((r) => (release = r));
    try {
      await previous;
      return await fn(slice);
    } finally {
      release();
    }
  }

  /** The slice's buffer, created on first use (mapped at creation for uploads). */
  bufferOf(slice: Slice): GPUBuffer {
    if (slice.buffer === undefined) {
      const ledger = this.host.ledger;
      ledger.owning = true;
      try {
        slice.buffer = this.host.device.createBuffer({ size: this.shape.sliceBytes, usage: this.usage, mappedAtCreation: this.usage === (BUF.MAP_WRITE | BUF.COPY_SRC) });
      } finally {
        ledger.owning = false;
      }
      slice.mapped = undefined;
    }
    return slice.buffer;
  }

  /** Drops a slice whose map failed (destroyed device, rejected command): the next use makes a new one. */
  discard(slice: Slice): void {
    slice.buffer?.destroy();
    slice.buffer = undefined;
    slice.mapped = undefined;
  }

  destroy(): void {
    for (const s of this.slices) this.discard(s);
  }

  /** Staging buffers alive now (testing: the ring never grows past `shape.slices`). */
  get live(): number {
    return this.slices.filter((s) => s.buffer !== undefined).length;
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortError(signal.reason);
}

/** The staging rings of one device generation. */
export class StagingPool {
  private readonly uploads: Ring;
  private readonly reads: Ring;
  /** Where a chunked call with the caller's `out` gathers its chunks (runtime/landing.ts). */
  readonly landing: LandingPool;
  /** Where a chunked call puts its whole host input for its chunks to copy from (runtime/landing.ts). */
  readonly uploadLanding: LandingPool;
  private closed = false;

  constructor(
    private readonly host: TransferHost,
    readonly shape: StagingShape,
  ) {
    this.uploads = new Ring(host, BUF.MAP_WRITE | BUF.COPY_SRC, { slices: shape.uploadSlices ?? shape.slices, sliceBytes: shape.sliceBytes });
    this.reads = new Ring(host, BUF.MAP_READ | BUF.COPY_DST, shape);
    this.landing = new LandingPool(host, 'read');
    this.uploadLanding = new LandingPool(host, 'write');
  }

  /** Each direction's next piece takes its first slice again (GpuDevice.exclusive, at the start of a call). */
  rewind(): void {
    this.uploads.rewind();
    this.reads.rewind();
  }

  /** Staging buffers alive now, both directions. */
  get liveSlices(): number {
    return this.uploads.live + this.reads.live;
  }

  /**
   * Writes `data` into `dst` at byte `offset` (both multiples of 4 bytes; a ragged tail is padded
   * with zeros). Resolves once every byte was handed to the queue, so a later submit sees them.
   */
  async write(dst: GPUBuffer, offset: number, data: ArrayBufferView, signal?: AbortSignal): Promise<void> {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (bytes.byteLength === 0) return;
    // An ordinary array whose size is a multiple of 4 bytes is written as it is; anything else
    // small is copied first, padded to 4 bytes, which also keeps a SharedArrayBuffer (it crashes
    // Dawn's Node bindings) away from Dawn.
    const asIs = bytes.byteLength % 4 === 0 && !(bytes.buffer instanceof SharedArrayBuffer);
    if (bytes.byteLength <= SMALL_WRITE_BYTES || (asIs && bytes.byteLength <= (this.shape.directWriteBytes ?? SMALL_WRITE_BYTES))) {
      throwIfAborted(signal);
      let src = bytes;
      if (!asIs) {
        src = new Uint8Array(Math.ceil(bytes.byteLength / 4) * 4);
        src.set(bytes);
      }
      this.host.device.queue.writeBuffer(dst, offset, src);
      return;
    }
    const step = this.uploads.shape.sliceBytes;
    const pieces: Promise<void>[] = [];
    for (let o = 0; o < bytes.byteLength; o += step) {
      pieces.push(this.uploads.take((s) => this.writePiece(s, dst, offset + o, bytes.subarray(o, Math.min(bytes.byteLength, o + step)), signal)));
    }
    await settleAll(pieces);
  }

  private async writePiece(slice: Slice, dst: GPUBuffer, at: number, piece: Uint8Array, signal: AbortSignal | undefined): Promise<void> {
    this.assertOpen();
    const buffer = this.uploads.bufferOf(slice);
    if (slice.mapped !== undefined) {
      try {
        await slice.mapped;
      } catch (e) {
        this.uploads.discard(slice);
        throw mapFailure(e);
      }
      slice.mapped = undefined;
    }
    // Checked after the wait: an abort during a long stream stops at the next piece.
    throwIfAborted(signal);
    this.assertOpen();
    const size = Math.ceil(piece.byteLength / 4) * 4;
    const range = new Uint8Array(buffer.getMappedRange(0, size));
    copyInto(range, piece);
    if (size > piece.byteLength) range.fill(0, piece.byteLength);
    buffer.unmap();
    const enc = this.host.device.createCommandEncoder();
    enc.copyBufferToBuffer(buffer, 0, dst, at, size);
    this.host.device.queue.submit([enc.finish()]);
    // Mapped again for the next piece; resolves when the copy above has run.
    const mapped = this.host.race(buffer.mapAsync(BUF.MAP_WRITE, 0, this.uploads.shape.sliceBytes));
    mapped.catch(() => {});
    slice.mapped = mapped;
  }

  /**
   * Copies `size` bytes of `src` from byte `offset` into `into`, after everything already
   * submitted. `into` is written piece by piece, each piece only once its copy has landed and
   * `ready` (when given) has resolved; if `ready` rejects, `into` is not written at all.
   */
  async read(src: GPUBuffer, offset: number, size: number, into: Uint8Array, signal?: AbortSignal, ready?: Promise<void>): Promise<void> {
    if (size === 0) return;
    const step = this.reads.shape.sliceBytes;
    const pieces: Promise<void>[] = [];
    for (let o = 0; o < size; o += step) {
      const len = Math.min(step, size - o);
      pieces.push(this.reads.take((s) => this.readPiece(s, src, offset + o, into.subarray(o, o + len), signal, ready)));
    }
    await settleAll(pieces);
  }

  private async readPiece(slice: Slice, src: GPUBuffer, at: number, into: Uint8Array, signal: AbortSignal | undefined, ready: Promise<void> | undefined): Promise<void> {
    throwIfAborted(signal);
    this.assertOpen();
    const buffer = this.reads.bufferOf(slice);
    const size = Math.ceil(into.byteLength / 4) * 4;
    const enc = this.host.device.createCommandEncoder();
    enc.copyBufferToBuffer(src, at, buffer, 0, size);
    this.host.device.queue.submit([enc.finish()]);
    try {
      await this.host.race(buffer.mapAsync(MAP_READ, 0, size));
    } catch (e) {
      this.reads.discard(slice);
      throw mapFailure(e);
    }
    try {
      if (ready !== undefined) await ready;
      // An output whose pages workers are still faulting in (fresh-output.ts) is copied into only after them.
      const touched = untilTouched(into.buffer, into.byteOffset, into.byteOffset + into.byteLength);
      if (touched !== undefined) await touched;
      copyInto(into, new Uint8Array(buffer.getMappedRange(0, size), 0, into.byteLength));
    } finally {
      buffer.unmap();
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new DeviceError('the WebGPU device was destroyed while a transfer was pending');
  }

  /** Destroys every slice (pending maps reject); later transfers reject with DeviceError. */
  destroy(): void {
    this.closed = true;
    this.uploads.destroy();
    this.reads.destroy();
    this.landing.destroy();
    this.uploadLanding.destroy();
  }
}

/** A failed map: keep DeviceError (loss) and AbortError as they are; anything else is the device refusing. */
function mapFailure(e: unknown): Error {
  if (e instanceof DeviceError || e instanceof AbortError) return e;
  return new DeviceError(`a staging buffer could not be mapped (${(e as Error)?.message ?? String(e)})`, { cause: e });
}

/** Waits for every piece (none is left running behind a rejection), then rethrows the first failure. */
async function settleAll(pieces: readonly Promise<void>[]): Promise<void> {
  const results = await Promise.allSettled(pieces);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}
