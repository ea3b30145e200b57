/**
 * Fresh output memory faulted in by worker threads while the GPU works.
 *
 * A fresh output is backed by pages the kernel maps on first write, and on a big readback those
 * page faults, taken one at a time on the main thread inside the copy, cost more than the copy
 * itself. Outputs reuse the memory of results the caller dropped (GpuDevice.output); where none
 * is free, a large one is a new SharedArrayBuffer that a few worker threads touch (one write per
 * page) as soon as it is made, in parallel and during the call's upload and kernel. A readback
 * copies into a range of it only once the workers have reported every piece that range covers
 * done (see `untilTouched`), so a worker's write can never land on copied data.
 *
 * The workers are shared by every backend of the process, started on first use and unref'd while
 * idle, so they never keep a process alive.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** Fresh outputs smaller than this are not touched by the workers: their faults cost less than a round trip to them. */
export const PREFAULT_MIN_BYTES = 16 << 20;

const PAGE = 4096;

/**
 * After each piece the worker makes and drops an ArrayBuffer of the piece's size, never touched (so
 * never given pages): V8 counts an ArrayBuffer's memory towards collecting garbage but not a
 * SharedArrayBuffer's, and without that a worker, allocating next to nothing, would seldom collect
 * and its handle would keep every output it touched alive after the caller dropped it.
 */
const WORKER_SOURCE = `const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, buffer, start, end }) => {
  const bytes = new Uint8Array(buffer);
  for (let i = start; i < end; i += ${PAGE}) bytes[i] = 0;
  parentPort.postMessage(id);
  void new ArrayBuffer(end - start);
});`;

/** How many threads touch pages: enough to outrun the readback, leaving cores to the main thread and the driver. */
export function prefaultThreads(): number {
  return Math.max(1, Math.min(8, availableParallelism() - 2));
}

/**
 * Bytes of one piece of touching. A job is cut into pieces dealt to the workers in order, so
 * the front of an output is faulted in first: that is where a chunked readback copies first.
 */
export const TOUCH_PIECE_BYTES = 8 << 20;

interface Job {
  readonly worker: Worker;
  readonly resolve: () => void;
}

/** One piece of an output being touched: bytes [start, end), `done` once its worker is through. */
interface Piece {
  readonly start: number;
  readonly end: number;
  readonly done: Promise<void>;
}

class TouchPool {
  private readonly workers: Worker[];
  private readonly jobs = new Map<number, Job>();
  private nextId = 0;

  constructor(threads: number) {
    this.workers = Array.from({ length: threads }, () => {
      const w = new Worker(WORKER_SOURCE, { eval: true });
      w.unref();
      w.on('message', (id: number) => this.pieceDone(id));
      // A worker that dies writes nothing more: its pieces count as done (their pages fault in the copy instead).
      w.on('error', () => this.workerGone(w));
      w.on('exit', () => this.workerGone(w));
      return w;
    });
  }

  touch(buffer: SharedArrayBuffer): Piece[] {
    const live = this.workers.filter((w) => w.threadId >= 0);
    if (live.length === 0) return [];
    const pieces: Piece[] = [];
    if (this.jobs.size === 0) for (const w of this.workers) w.ref();
    for (let start = 0, i = 0; start < buffer.byteLength; start += TOUCH_PIECE_BYTES, i++) {
      const end = Math.min(buffer.byteLength, start + TOUCH_PIECE_BYTES);
      const id = this.nextId++;
      const worker = live[i % live.length]!;
      const done = new Promise<void>((resolve) => this.jobs.set(id, { worker, resolve }));
      worker.postMessage({ id, buffer, start, end });
      pieces.push({ start, end, done });
    }
    return pieces;
  }

  private pieceDone(id: number): void {
    const job = this.jobs.get(id);
    if (job === undefined) return;
    this.jobs.delete(id);
    if (this.jobs.size === 0) for (const w of this.workers) w.unref();
    job.resolve();
  }

  private workerGone(w: Worker): void {
    const i = this.workers.indexOf(w);
    if (i < 0) return;
    this.workers.splice(i, 1);
    // This worker will report none of its pieces.
    for (const [id, job] of [...this.jobs]) if (job.worker === w) this.pieceDone(id);
  }
}

let pool: TouchPool | undefined;
const touching = new WeakMap<ArrayBufferLike, readonly Piece[]>();

/**
 * Has worker threads fault in the pages of `buffer`, a fresh output of at least
 * PREFAULT_MIN_BYTES; `alias` is another handle on the same memory (the caller's), which a
 * readback may be given instead: `untilTouched` answers for both.
 */
export function prefault(buffer: SharedArrayBuffer, alias: SharedArrayBuffer): void {
  pool ??= new TouchPool(prefaultThreads());
  const pieces = pool.touch(buffer);
  touching.set(buffer, pieces);
  touching.set(alias, pieces);
}

/**
 * Resolves once the workers are done with bytes [start, end) of `buffer` (undefined for memory
 * they never touched): only then may a readback copy into them.
 */
export function untilTouched(buffer: ArrayBufferLike, start = 0, end = buffer.byteLength): Promise<void> | undefined {
  const pieces = touching.get(buffer)?.filter((p) => p.start < end && p.end > start);
  if (pieces === undefined || pieces.length === 0) return undefined;
  return Promise.all(pieces.map((p) => p.done)).then(() => {});
}
