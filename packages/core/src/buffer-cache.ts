/**
 * Keeps buffers (SharedArrayBuffers, shared WebAssembly memories) of recently used sizes. A fresh
 * one costs a page fault per 4 KiB on first touch (costing more than the copy itself), so
 * repeated calls of one size reuse them. Bounded: the buffers released longest ago make room for a
 * new one, so sizes no longer in use never crowd out the current ones. Emptied on dispose.
 */
export class BufferCache<T> {
  private readonly free = new Map<number, T[]>();
  private bytes = 0;
  private readonly order: T[] = [];
  constructor(
    private readonly maxBytes: number,
    private readonly make: (byteLength: number) => T,
    private readonly size: (item: T) => number,
  ) {}

  acquire(byteLength: number): T {
    const list = this.free.get(byteLength);
    const item = list?.pop();
    if (item !== undefined) {
      this.bytes -= byteLength;
      this.order.splice(this.order.indexOf(item), 1);
      return item;
    }
    return this.make(byteLength);
  }

  release(item: T): void {
    const n = this.size(item);
    if (n === 0 || n > this.maxBytes) return;
    while (this.bytes + n > this.maxBytes && this.order.length > 0) {
      const old = this.order.shift()!;
      const sameSize = this.free.get(this.size(old))!;
      sameSize.splice(sameSize.indexOf(old), 1);
      this.bytes -= this.size(old);
    }
    let list = this.free.get(n);
    if (list === undefined) this.free.set(n, (list = []));
    list.push(item);
    this.order.push(item);
    this.bytes += n;
  }

  /** Bytes kept free now. */
  get keptBytes(): number {
    return this.bytes;
  }

  clear(): void {
    this.free.clear();
    this.order.length = 0;
    this.bytes = 0;
  }
}
