import { BUF, MAP_READ } from './usage.js';

/** Begin/end timestamps of one compute pass, resolved and read back after the submit. */
export class TimestampTimer {
  private readonly set: GPUQuerySet;
  private readonly resolveBuf: GPUBuffer;
  constructor(private readonly device: GPUDevice) {
    this.set = device.createQuerySet({ type: 'timestamp', count: 2 });
    this.resolveBuf = device.createBuffer({ size: 16, usage: BUF.QUERY_RESOLVE | BUF.COPY_SRC });
  }
  writes(): GPUComputePassTimestampWrites {
    return { querySet: this.set, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 };
  }
  private staging: GPUBuffer | undefined;
  resolve(enc: GPUCommandEncoder): void {
    enc.resolveQuerySet(this.set, 0, 2, this.resolveBuf, 0);
    this.staging = this.device.createBuffer({ size: 16, usage: BUF.MAP_READ | BUF.COPY_DST });
    enc.copyBufferToBuffer(this.resolveBuf, 0, this.staging, 0, 16);
  }
  async read(gpu: { race<T>(p: Promise<T>): Promise<T> }): Promise<number | undefined> {
    const s = this.staging;
    if (s === undefined) return undefined;
    this.staging = undefined;
    try {
      await gpu.race(s.mapAsync(MAP_READ));
      const [t0, t1] = new BigUint64Array(s.getMappedRange());
      // Some drivers report 0 for an unsupported write; treat that as "no measurement".
      if (t0 === undefined || t1 === undefined || t1 <= t0) return undefined;
      return Number(t1 - t0) / 1e6;
    } finally {
      s.destroy();
    }
  }
  destroy(): void {
    this.set.destroy();
    this.resolveBuf.destroy();
  }
}
