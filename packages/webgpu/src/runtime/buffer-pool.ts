import type { BufferLedger } from './ledger.js';

/**
 * Idle bytes a pool keeps. Hardware: enough for a large scan's input and output (two buffers
 * near the largest binding), which otherwise are created and zero-filled again every call.
 * Software adapters keep their buffers in host memory, where less is held back.
 */
export const POOL_IDLE_BYTES = { hardware: 4 * 2 ** 30, software: 2 ** 30 } as const;

/**
 * Reuses storage and uniform buffers of identical size and usage across calls: the bench and
 * the property tests call the same shapes over and over, and buffer creation on Dawn costs a
 * round of allocation and zeroing. Keeps at most `maxBytes` idle, dropping the buffers idle
 * longest first, and makes room before it creates a buffer, so idle buffers and a call's new
 * ones together stay within `maxBytes` plus what the call itself needs.
 * One pool per device generation; it keeps the ledger's idle/out state of its buffers, so ops
 * that use `gpu.pool` directly are counted the same as those going through GpuDevice.
 */
export class BufferPool {
  private readonly idle = new Map<string, GPUBuffer[]>();
  /** Every idle buffer, the one idle longest first (a Set keeps insertion order). */
  private readonly byAge = new Set<GPUBuffer>();
  private idleBytes = 0;
  private closed = false;
  constructor(
    private readonly device: GPUDevice,
    private readonly ledger: BufferLedger,
    private readonly generation: number,
    private readonly maxBytes: number = POOL_IDLE_BYTES.software,
  ) {}

  acquire(size: number, usage: number): GPUBuffer {
    const list = this.idle.get(keyOf(size, usage));
    const b = list?.pop();
    if (b !== undefined) {
      this.byAge.delete(b);
      this.idleBytes -= size;
      this.ledger.setState(b, 'out');
      return b;
    }
    this.makeRoom(size);
    return this.device.createBuffer({ size, usage });
  }

  /**
   * Takes `b` back. A buffer of another device (one lost since it was acquired), one already
   * destroyed, or any once the pool is closed is destroyed, never pooled; a second release of
   * the same buffer is ignored.
   */
  release(b: GPUBuffer): void {
    if (this.closed || this.ledger.generationOf(b) !== this.generation) {
      b.destroy();
      return;
    }
    if (this.ledger.stateOf(b) !== 'out') return;
    if (b.size > this.maxBytes) {
      b.destroy();
      return;
    }
    this.makeRoom(b.size);
    const key = keyOf(b.size, b.usage);
    let list = this.idle.get(key);
    if (list === undefined) this.idle.set(key, (list = []));
    list.push(b);
    this.byAge.add(b);
    this.idleBytes += b.size;
    this.ledger.setState(b, 'idle');
  }

  /** Bytes held idle now (testing). */
  get heldBytes(): number {
    return this.idleBytes;
  }

  /** Destroys the idle buffers; later releases destroy theirs (the device is gone). */
  close(): void {
    this.closed = true;
    this.clear();
  }

  /** Destroys every idle buffer (also after the device ran out of memory, so a retry finds it free). */
  clear(): void {
    for (const b of this.byAge) b.destroy();
    this.idle.clear();
    this.byAge.clear();
    this.idleBytes = 0;
  }

  /** Destroys the buffers idle longest until `bytes` more fit within `maxBytes` (or none is left). */
  private makeRoom(bytes: number): void {
    for (const b of this.byAge) {
      if (this.idleBytes + bytes <= this.maxBytes) return;
      this.byAge.delete(b);
      const list = this.idle.get(keyOf(b.size, b.usage))!;
      list.splice(list.indexOf(b), 1);
      this.idleBytes -= b.size;
      b.destroy();
    }
  }
}

const keyOf = (size: number, usage: number): string => `${usage}:${size}`;
