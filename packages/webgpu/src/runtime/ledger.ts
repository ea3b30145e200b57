/**
 * Bookkeeping of the GPUBuffers a GpuDevice created and has not destroyed: what the
 * `@kernelkit/webgpu/testing` counters report, and what a failed call's sweep reclaims.
 *
 * Counting happens at the device, not in the pool: ops also create buffers straight through
 * `gpu.device.createBuffer` (zero-initialised scratch) and staging buffers are destroyed by
 * whoever mapped them, so only the device's createBuffer and each buffer's destroy see them all.
 * Both are wrapped as own properties of the objects this runtime created; nothing global changes.
 */

/** How a tracked buffer is held: handed out to a call, idle in the pool, or owned by the runtime (timer, warm-up). */
export type BufferState = 'out' | 'idle' | 'owned';

interface Entry {
  readonly generation: number;
  state: BufferState;
  /** The exclusive call that last took it out (0: outside any call). */
  call: number;
}

let processLive = 0;

/** Buffers created and not destroyed by every GpuDevice of this process. */
export function processLiveBuffers(): number {
  return processLive;
}

export class BufferLedger {
  private readonly entries = new Map<GPUBuffer, Entry>();
  /** The exclusive call now running (0: none); new and checked-out buffers are stamped with it. */
  call = 0;
  /** While true, created buffers count as runtime-owned (long-lived, not a call's). */
  owning = false;

  /** Routes `device.createBuffer` (and the returned buffers' destroy) through this ledger. */
  instrument(device: GPUDevice, generation: number): void {
    const create = device.createBuffer.bind(device);
    device.createBuffer = (descriptor: GPUBufferDescriptor): GPUBuffer => this.track(create(descriptor), generation);
  }

  private track(b: GPUBuffer, generation: number): GPUBuffer {
    this.entries.set(b, { generation, state: this.owning ? 'owned' : 'out', call: this.call });
    processLive++;
    const destroy = b.destroy.bind(b);
    b.destroy = (): undefined => {
      if (this.entries.delete(b)) processLive--;
      return destroy();
    };
    return b;
  }

  get size(): number {
    return this.entries.size;
  }

  count(state: BufferState): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.state === state) n++;
    return n;
  }

  /** The generation (device) a live buffer belongs to; undefined once destroyed or if never tracked. */
  generationOf(b: GPUBuffer): number | undefined {
    return this.entries.get(b)?.generation;
  }

  stateOf(b: GPUBuffer): BufferState | undefined {
    return this.entries.get(b)?.state;
  }

  setState(b: GPUBuffer, state: BufferState): void {
    const e = this.entries.get(b);
    if (e === undefined) return;
    e.state = state;
    if (state === 'out') e.call = this.call;
  }

  /** Destroys the buffers call `call` took out and never gave back (a failed call skips its releases). */
  sweep(call: number): number {
    const lost = [...this.entries].filter(([, e]) => e.state === 'out' && e.call === call).map(([b]) => b);
    for (const b of lost) b.destroy();
    return lost.length;
  }

  /** Destroys every buffer of `generation` still alive: its device is being destroyed or was lost. */
  retire(generation: number): void {
    const all = [...this.entries].filter(([, e]) => e.generation === generation).map(([b]) => b);
    for (const b of all) b.destroy();
  }
}
