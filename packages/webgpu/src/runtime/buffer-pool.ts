/**
 * Reuses storage and uniform buffers of identical size and usage across calls: the bench and
 * the property tests call the same shapes over and over, and buffer creation on Dawn costs a
 * round of allocation and zeroing. Keeps at most `maxBytes` idle; the rest is destroyed.
 */
export class BufferPool {
  private readonly idle = new Map<string, GPUBuffer[]>();
  private idleBytes = 0;
  constructor(
    private readonly device: GPUDevice,
    private readonly maxBytes = 1 << 30,
  ) {}

  acquire(size: number, usage: number): GPUBuffer {
    const list = this.idle.get(`${usage}:${size}`);
    const b = list?.pop();
    if (b !== undefined) {
      this.idleBytes -= size;
      return b;
    }
    return this.device.createBuffer({ size, usage });
  }

  release(b: GPUBuffer): void {
    if (this.idleBytes + b.size > this.maxBytes) {
      b.destroy();
      return;
    }
    const key = `${b.usage}:${b.size}`;
    let list = this.idle.get(key);
    if (list === undefined) this.idle.set(key, (list = []));
    list.push(b);
    this.idleBytes += b.size;
  }

  clear(): void {
    for (const list of this.idle.values()) for (const b of list) b.destroy();
    this.idle.clear();
    this.idleBytes = 0;
  }
}
