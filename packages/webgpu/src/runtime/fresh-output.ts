/**
 * Output arrays whose memory is faulted in by worker threads while the GPU works.
 *
 * A freshly allocated typed array is backed by pages the kernel maps on first write, and on a
 * big readback those page faults, taken one at a time on the main thread inside the copy, cost
 * more than the copy itself. Here a large output is a SharedArrayBuffer that a few worker
 * threads touch (one write per page) as soon as it is made, in parallel and during the call's
 * upload and kernel; the readback copies into it only once every worker has reported its part
 * done (see `untilTouched`), so a worker's write can never land on copied data.
 *
 * The workers are shared by every backend of the process, started on first use and unref'd while
 * idle, so they never keep a process alive.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** Outputs smaller than this are plain arrays: their faults cost less than a round trip to the workers. */
export const PREFAULT_MIN_BYTES = 16 << 20;

const PAGE = 4096;

const WORKER_SOURCE = `const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, buffer, start, end }) => {
  const bytes = new Uint8Array(buffer);
  for (let i = start; i < end; i += ${PAGE}) bytes[i] = 0;
  parentPort.postMessage(id);
});`;

/** How many threads touch pages: enough to outrun the readback, leaving cores to the main thread and the driver. */
export function prefaultThreads(): number {
  return Math.max(1, Math.min(8, availableParallelism() - 2));
}

interface Job {
  left: number;
  readonly resolve: () => void;
}

class TouchPool {
  private readonly workers: Worker[];
  private readonly jobs = new Map<number, Job>();
  private nextId = 0;

  constructor(threads: number) {
    this.workers = Array.from({ length: threads }, () => {
      const w = new Worker(WORKER_SOURCE, { eval: true });
      w.unref();
      w.on('message', (id: number) => this.partDone(id));
      // A worker that dies writes nothing more: its parts count as done (their pages fault in the copy instead).
      w.on('error', () => this.workerGone(w));
      w.on('exit', () => this.workerGone(w));
      return w;
    });
  }

  touch(buffer: SharedArrayBuffer): Promise<void> {
    const live = this.workers.filter((w) => w.threadId >= 0);
    if (live.length === 0) return Promise.resolve();
    const id = this.nextId++;
    const per = Math.ceil(buffer.byteLength / PAGE / live.length) * PAGE;
    return new Promise<void>((resolve) => {
      this.jobs.set(id, { left: live.length, resolve });
      if (this.jobs.size === 1) for (const w of this.workers) w.ref();
      live.forEach((w, i) => w.postMessage({ id, buffer, start: Math.min(buffer.byteLength, i * per), end: Math.min(buffer.byteLength, (i + 1) * per) }));
    });
  }

  private partDone(id: number): void {
    const job = this.jobs.get(id);
    if (job === undefined || --job.left > 0) return;
    this.jobs.delete(id);
    if (this.jobs.size === 0) for (const w of this.workers) w.unref();
    job.resolve();
  }

  private workerGone(w: Worker): void {
    const i = this.workers.indexOf(w);
    if (i < 0) return;
    this.workers.splice(i, 1);
    // Every job waits for one part per worker it was given; this worker will send none of its.
    for (const id of [...this.jobs.keys()]) this.partDone(id);
  }
}

let pool: TouchPool | undefined;
const touching = new WeakMap<ArrayBufferLike, Promise<void>>();

type OutputCtor<T> = { new (length: number): T; new (buffer: SharedArrayBuffer): T; readonly BYTES_PER_ELEMENT: number };

/**
 * A zeroed output of `length` elements: with `prefault` and at least PREFAULT_MIN_BYTES, backed by
 * a SharedArrayBuffer whose pages worker threads are faulting in; otherwise a plain array.
 */
export function freshOutput<T>(ctor: OutputCtor<T>, length: number, prefault: boolean): T {
  const bytes = length * ctor.BYTES_PER_ELEMENT;
  if (!prefault || bytes < PREFAULT_MIN_BYTES) return new ctor(length);
  pool ??= new TouchPool(prefaultThreads());
  const buffer = new SharedArrayBuffer(bytes);
  touching.set(buffer, pool.touch(buffer));
  return new ctor(buffer);
}

/** Resolves once the workers are done with `buffer` (at once for memory they never touched): only then may a readback copy into it. */
export function untilTouched(buffer: ArrayBufferLike): Promise<void> | undefined {
  return touching.get(buffer);
}
