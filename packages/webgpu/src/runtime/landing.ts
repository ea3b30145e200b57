/**
 * Landing buffers: one whole-call staging buffer per direction and device generation.
 *
 * Reads (MAP_READ | COPY_DST): a chunked call with the caller's `out` copies every chunk's output
 * into it on the GPU; it is mapped and copied into `out` only once every chunk's pass and copy
 * succeeded. `out` is then written once, at reused-memory speed, and never partly (no array of
 * our own with fresh pages in between).
 * Writes (MAP_WRITE | COPY_SRC, kept mapped between calls): a large call copies its whole host
 * input into it in one piece, and each chunk copies its part from there on the GPU, as from a
 * resident input: one host copy into one mapped buffer instead of a staging piece per slice.
 *
 * Bounded: each is as large as the largest of the last LANDING_RECENT_CALLS calls needed (a call
 * needing more replaces it; once no recent call needed its size it shrinks on the next take).
 * Counted by the ledger as runtime-owned, like the staging slices, and destroyed with the
 * generation (dispose, device loss).
 */
import { AbortError, copyInto, DeviceError } from '@kernelkit/core';
import { untilTouched } from './fresh-output.js';
import type { TransferHost } from './transfer.js';
import { BUF, MAP_READ } from './usage.js';

/** How many recent calls the landing buffer's size follows. */
export const LANDING_RECENT_CALLS = 8;

/**
 * An input is copied in pieces of this size, yielding between them so that an abort is seen
 * between pieces. Large: the C library streams a copy past the CPU caches only when it is very
 * large, and into mapped staging memory one copy of the whole input ran faster than pieces of
 * 256 MiB, and those faster than 32 MiB (apps/studies webgpu/timeline.js --memcpy, webgpu/e2e.js).
 * The cost: an abort waits for the piece under way (a second or less at host copy speeds).
 */
export const COPY_IN_PIECE_BYTES = 2 ** 31;

/** Landing sizes are rounded up to whole pages. */
const LANDING_GRAIN = 4096;

/** One call's hold on a landing buffer. */
export interface Landing {
  readonly buffer: GPUBuffer;
  /**
   * Read pools: maps the first `into.byteLength` bytes (after everything submitted so far) and
   * copies them into `into` once `ready` (when given) has resolved too; if the map fails or
   * `ready` rejects, `into` is not written at all.
   */
  copyOut(into: Uint8Array, ready?: Promise<void>): Promise<void>;
  /**
   * Write pools: copies `data` to the start of the buffer (a ragged tail padded with zeros) and
   * unmaps it for the GPU's copies; in pieces of COPY_IN_PIECE_BYTES with an abort check between.
   */
  copyIn(data: Uint8Array, signal?: AbortSignal): Promise<void>;
  /** Gives the buffer back (after the copies, or instead of them on a failure); a write buffer is mapped again for the next call. */
  release(): void;
}

export type LandingDirection = 'read' | 'write';

export class LandingPool {
  private buffer: GPUBuffer | undefined;
  /** Write pools: the map that makes the buffer writable again (pending while the GPU copies from it). */
  private mapping: Promise<void> | undefined;
  private unmapped = false;
  private readonly recent: number[] = [];
  private held = false;
  private closed = false;

  constructor(
    private readonly host: TransferHost,
    private readonly direction: LandingDirection = 'read',
    private readonly copyPieceBytes = COPY_IN_PIECE_BYTES,
  ) {}

  /** Bytes the pool holds now (testing: it never grows past the largest recent call). */
  get bytes(): number {
    return this.buffer?.size ?? 0;
  }

  /**
   * The landing buffer, at least `bytes` large, for one call; undefined when another call holds
   * it, the device has no memory for it (the caller then reads its chunks back the plain way) or
   * the pool is closed.
   */
  async take(bytes: number): Promise<Landing | undefined> {
    if (this.held || this.closed) return undefined;
    const need = Math.ceil(Math.max(bytes, 4) / LANDING_GRAIN) * LANDING_GRAIN;
    this.recent.push(need);
    if (this.recent.length > LANDING_RECENT_CALLS) this.recent.shift();
    const keep = Math.max(...this.recent);
    if (this.buffer !== undefined && (this.buffer.size < need || this.buffer.size > keep)) this.discard();
    this.held = true;
    if (this.buffer === undefined) {
      let made: GPUBuffer | undefined;
      try {
        made = await this.create(keep);
      } finally {
        if (made === undefined) this.held = false;
      }
      if (made === undefined) {
        // Not a size to keep trying for: later calls size the buffer by the others.
        this.recent.pop();
        return undefined;
      }
      this.buffer = made;
    }
    const buffer = this.buffer;
    let released = false;
    const assertLive = (): void => {
      if (this.closed || buffer !== this.buffer) throw new DeviceError('the WebGPU device was destroyed while a transfer was pending');
    };
    return {
      buffer,
      copyIn: async (data, signal) => {
        if (this.direction !== 'write') throw new Error('copyIn: this landing buffer is for reads');
        assertLive();
        if (this.mapping !== undefined) {
          try {
            await this.mapping;
          } catch (e) {
            this.discard();
            throw mapFailure(e);
          }
          this.mapping = undefined;
          assertLive();
        }
        const size = Math.ceil(data.byteLength / 4) * 4;
        const range = new Uint8Array(buffer.getMappedRange(0, size), 0, size);
        for (let o = 0; o < data.byteLength; o += this.copyPieceBytes) {
          if (o > 0) {
            await new Promise((r) => setImmediate(r));
            assertLive();
            if (signal?.aborted) {
              // Unmapped now, so release maps it afresh: a mapping hands out each range only once.
              buffer.unmap();
              this.unmapped = true;
              throw new AbortError(signal.reason);
            }
          }
          copyInto(range, data.subarray(o, o + this.copyPieceBytes), o);
        }
        if (size > data.byteLength) range.fill(0, data.byteLength);
        buffer.unmap();
        this.unmapped = true;
      },
      copyOut: async (into, ready) => {
        if (this.direction !== 'read') throw new Error('copyOut: this landing buffer is for writes');
        assertLive();
        const size = Math.ceil(into.byteLength / 4) * 4;
        if (size === 0) return;
        try {
          await this.host.race(buffer.mapAsync(MAP_READ, 0, size));
        } catch (e) {
          this.discard();
          throw mapFailure(e);
        }
        try {
          if (ready !== undefined) await ready;
          const touched = untilTouched(into.buffer, into.byteOffset, into.byteOffset + into.byteLength);
          if (touched !== undefined) await touched;
          copyInto(into, new Uint8Array(buffer.getMappedRange(0, size), 0, into.byteLength));
        } finally {
          buffer.unmap();
        }
      },
      release: () => {
        if (released) return;
        released = true;
        this.held = false;
        if (this.unmapped && buffer === this.buffer && !this.closed) {
          // Resolves once the GPU's copies from it have run; the next copyIn waits for it.
          this.unmapped = false;
          const mapping = this.host.race(buffer.mapAsync(BUF.MAP_WRITE, 0, buffer.size));
          mapping.catch(() => {});
          this.mapping = mapping;
        }
      },
    };
  }

  /** A new buffer of `size`, or undefined when the device is out of memory for it (its own error scope: the call goes on without it). */
  private async create(size: number): Promise<GPUBuffer | undefined> {
    const { device, ledger } = this.host;
    device.pushErrorScope('out-of-memory');
    let buffer: GPUBuffer;
    ledger.owning = true;
    try {
      buffer = this.direction === 'read' ? device.createBuffer({ size, usage: BUF.MAP_READ | BUF.COPY_DST }) : device.createBuffer({ size, usage: BUF.MAP_WRITE | BUF.COPY_SRC, mappedAtCreation: true });
    } finally {
      ledger.owning = false;
    }
    const oom = await this.host.race(device.popErrorScope());
    if (oom === null && !this.closed) return buffer;
    buffer.destroy();
    return undefined;
  }

  private discard(): void {
    this.buffer?.destroy();
    this.buffer = undefined;
    this.mapping = undefined;
    this.unmapped = false;
  }

  /** Destroys the buffer; later takes return undefined. */
  destroy(): void {
    this.closed = true;
    this.discard();
  }
}

/** A failed map: keep DeviceError (loss) as it is; anything else is the device refusing. */
function mapFailure(e: unknown): DeviceError {
  return e instanceof DeviceError ? e : new DeviceError(`a landing buffer could not be mapped (${(e as Error)?.message ?? String(e)})`, { cause: e });
}
