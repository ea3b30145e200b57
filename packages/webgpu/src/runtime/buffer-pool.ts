import type { BufferLedger } from './ledger.js';

/**
 * Reuses storage and uniform buffers of identical size and usage across calls: the bench and
 * the property tests call the same shapes over and over, and buffer creation on Dawn costs a
 * round of allocation and zeroing. Keeps at most `maxBytes` idle; the rest is destroyed.
 * One pool per device generation; it keeps the ledger's idle/out state of its buffers, so ops
 * that use `gpu.pool` directly are counted the same as those going through GpuDevice.
 */
export class BufferPool {
  private readonly idle = new Map<string, GPUBuffer[]>();
  private idleBytes = 0;
  private closed = false;
  constructor(
    private readonly device: GPUDevice,
    private readonly ledger: BufferLedger,
    private readonly generation: number,
    private readonly maxBytes = 1 << 30,
  ) {}

  acquire(size: number, usage: number): GPUBuffer {
    const list = this.idle.get(`${usage}:${size}`);
    const b = list?.pop();
    if (b !== undefined) {
      this.idleBytes -= size;
      this.ledger.setState(b, 'out');
      return b;
    }
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
    if (this.idleBytes + b.size > this.maxBytes) {
      b.destroy();
      return;
    }
    const key = `${b.usage}:${b.size}`;
    let list = this.idle.get(key);
    if (list === undefined) this.idle.set(key, (list = []));
    list.push(b);
    this.idleBytes += b.size;
    this.ledger.setState(b, 'idle');
  }

  /** Destroys the idle buffers; later releases destroy theirs (the device is gone). */
  close(): void {
    this.closed = true;
    this.clear();
  }

  clear(): void {
    for (const list of this.idle.values()) for (const b of list) b.destroy();
    this.idle.clear();
    this.idleBytes = 0;
  }
}
