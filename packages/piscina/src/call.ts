import { setMaxListeners } from 'node:events';
import { AbortError, copyInto, DisposedError, KernelkitError, now, WorkerError, type TypedArray, errorMessage } from '@kernelkit/core';
import type { OpName } from '@kernelkit/ops';
import { bufferId } from './buffer-ids.js';
import type { Pool } from './pool.js';
import { epochMs, STOPPED_MESSAGE, type ModuleMemory, UNIT_STAGED, UNIT_STOP, UNIT_WAITING, UNIT_WORDS, type Dtype, type Ref, type Task, type TaskTimes } from './protocol.js';

type Ctor<T extends TypedArray> = new (buffer: SharedArrayBuffer | number, byteOffset?: number, length?: number) => T;

function dtypeOf(a: TypedArray): Dtype {
  if (a instanceof Float32Array) return 'f32';
  if (a instanceof Float64Array) return 'f64';
  if (a instanceof Uint32Array) return 'u32';
  return 'i32';
}

const isShared = (a: ArrayBufferView): boolean => a.buffer instanceof SharedArrayBuffer;

function refOf(a: TypedArray): Ref {
  const id = bufferId(a.buffer);
  const ref = { buf: a.buffer as SharedArrayBuffer, off: a.byteOffset, len: a.length, dtype: dtypeOf(a) };
  return id === undefined ? ref : { ...ref, id };
}

const isStopped = (err: unknown): boolean => err instanceof Error && err.message === STOPPED_MESSAGE;

/** Splits [0, n) into `parts` contiguous ranges whose sizes differ by at most one. */
export function split(n: number, parts: number): Array<[number, number]> {
  const p = Math.max(1, Math.min(parts, n));
  const out: Array<[number, number]> = [];
  for (let i = 0; i < p; i++) out.push([Math.floor((i * n) / p), Math.floor(((i + 1) * n) / p)]);
  return out;
}

/**
 * Bounds of units over [0, n) for the threads to claim in order, largest first: each unit takes
 * 1/(2·threads) of what is left, and none fewer than `least` (the last may be smaller). The
 * threads start on big units (few claims, and the main thread stages input ahead of them) and end
 * on small ones, so they finish close together. Unit i is [b[i], b[i + 1]).
 */
export function guidedBounds(n: number, threads: number, least: number): number[] {
  const bounds = [0];
  for (let at = 0; at < n; ) {
    at = Math.min(n, at + Math.max(least, Math.ceil((n - at) / (2 * threads))));
    bounds.push(at);
  }
  return bounds;
}

/**
 * A caller's input seen from the workers. Already-shared arrays are used as they are; others are
 * copied into a pooled SharedArrayBuffer, lazily (`ensure`) so that the copy of the next task's
 * rows overlaps the work on the previous ones.
 */
export class SharedInput<T extends TypedArray> {
  readonly ref: Ref;
  readonly view: T;
  /** True when `view` is our own copy (the op may then use it as scratch). */
  readonly owned: boolean;
  private copied: number;
  constructor(
    private readonly call: Call,
    private readonly src: T,
  ) {
    if (isShared(src)) {
      this.view = src;
      this.owned = false;
      this.copied = src.length;
    } else {
      const sab = call.acquire(src.byteLength);
      this.view = new (src.constructor as Ctor<T>)(sab, 0, src.length);
      this.owned = true;
      this.copied = 0;
    }
    this.ref = refOf(this.view);
  }
  /** Makes elements [0, end) visible to the workers. */
  ensure(end: number): void {
    const e = Math.min(end, this.src.length);
    if (e <= this.copied) return;
    const t0 = now();
    copyInto(this.view, this.src.subarray(this.copied, e), this.copied);
    this.call.uploadMs += now() - t0;
    this.call.copiedInBytes += (e - this.copied) * this.src.BYTES_PER_ELEMENT;
    this.copied = e;
  }
  all(): this {
    this.ensure(this.src.length);
    return this;
  }
  /** Copies [start, end) out of order; the caller sees to it that every element is copied once. */
  copyRange(start: number, end: number): void {
    const t0 = now();
    copyInto(this.view, this.src.subarray(start, end), start);
    this.call.uploadMs += now() - t0;
    this.call.copiedInBytes += (end - start) * this.src.BYTES_PER_ELEMENT;
  }
}

/**
 * Where the workers write. Without an `out` the result is a SharedArrayBuffer-backed array that
 * the workers fill directly (no copy on this thread; its memory comes from `ResultMemory`, reused,
 * already faulted in, once the caller's last result of that size is collected: cheaper than an
 * ordinary array this thread copies into, which costs a page fault per 4 KiB and holds the workers
 * up on a small pool). A shared `out` is written in place (the one
 * exception to "`out` is written only on success": after a failure its contents are unspecified).
 * A caller's ordinary `out` cannot be reached from a worker: the workers write a pooled
 * SharedArrayBuffer (or `staging`) and it is copied into `out` in one go once every task has
 * succeeded.
 */
export class SharedOutput<T extends TypedArray> {
  readonly ref: Ref;
  readonly view: T;
  private dest: T | undefined;
  /** The caller's handle on the result the workers write (see ResultMemory in @kernelkit/core). */
  private handed: T | undefined;
  constructor(
    private readonly call: Call,
    ctor: Ctor<T>,
    length: number,
    out: T | undefined,
    /** Used instead of a pooled buffer for an ordinary `out` (a shared buffer the op has anyway). */
    staging?: T,
  ) {
    const bytes = length * (ctor as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
    if (out === undefined) {
      const memory = call.resultMemory(bytes);
      this.view = new ctor(memory.kept, 0, length);
      this.handed = new ctor(memory.forCaller, 0, length);
    } else if (isShared(out)) this.view = out;
    else {
      this.view = staging ?? new ctor(call.acquire(bytes), 0, length);
      this.dest = out;
    }
    this.ref = refOf(this.view);
  }
  /** After every task succeeded: fills a caller's ordinary `out` (everything else is already in place). */
  complete(): void {
    if (this.dest === undefined || this.call.failed) return;
    const t0 = now();
    copyInto(this.dest, this.view);
    this.call.readbackMs += now() - t0;
    this.call.copiedOutBytes += this.view.byteLength;
  }
  result(): T {
    return this.dest ?? this.handed ?? this.view;
  }
}

interface SubmitOptions {
  /** Pass the call's signal to Piscina (queued tasks are dropped, running ones end with their thread). Default true. */
  readonly abortable?: boolean;
}

/**
 * Where a pooled conv2d, convLayer or chained scan call's time went, in milliseconds from the call's start:
 * the calling thread queues one task per thread and stages the input (`stagedMs`); each task
 * starts on its worker (`startMs`), waits for staged input, runs the kernel and copies its output
 * into the result, and ends (`endMs`); the call has every task's result back at `doneMs`.
 */
export interface CallPhases {
  readonly stagedMs: number;
  readonly tasks: readonly (Omit<TaskTimes, 'startedAt' | 'endedAt'> & { readonly startMs: number; readonly endMs: number })[];
  readonly doneMs: number;
}

/** The layout each memory was last used with (see `Call.memory`). */
const layoutOf = new WeakMap<ModuleMemory, string>();

/** Records `layout` as `m`'s; whether the last call that used `m` left that same layout. */
function trackLayout(m: ModuleMemory, layout: string | undefined): boolean {
  const same = layout !== undefined && layoutOf.get(m) === layout;
  if (layout === undefined) layoutOf.delete(m);
  else layoutOf.set(m, layout);
  return same;
}

/**
 * One backend call on the pool: submits tasks, records the first failure (and cancels the rest),
 * and turns the outcome into the contract's errors. Buffers go back to the pool's cache only
 * when every task succeeded: after a failure a terminated worker might still be writing.
 */
export class Call {
  copiedInBytes = 0;
  copiedOutBytes = 0;
  uploadMs = 0;
  readbackMs = 0;
  tasks = 0;
  /** When the call started, the calling thread finished staging, and the claimed-units tasks' reports (see `CallPhases`). */
  private readonly startedAt = epochMs();
  stagedAt: number | undefined;
  readonly taskTimes: TaskTimes[] = [];
  private readonly ac = new AbortController();
  readonly signal: AbortSignal;
  private inflight = 0;
  private wake: Array<() => void> = [];
  private error: unknown;
  private errorFromWorker = false;
  private hasError = false;
  private sawStop = false;
  private readonly acquired: SharedArrayBuffer[] = [];
  private readonly memories: ModuleMemory[] = [];
  private readonly results: { readonly kept: SharedArrayBuffer; readonly forCaller: SharedArrayBuffer }[] = [];
  private readonly moduleResults: { readonly kept: ModuleMemory; readonly forCaller: SharedArrayBuffer }[] = [];
  private readonly onStop: Array<() => void> = [];

  constructor(
    private readonly pool: Pool,
    private readonly op: OpName,
    private readonly userSignal: AbortSignal | undefined,
  ) {
    this.signal = userSignal === undefined ? this.ac.signal : AbortSignal.any([userSignal, this.ac.signal]);
    // Piscina adds one abort listener per queued task; a call has many tasks by design.
    setMaxListeners(0, this.signal);
    if (userSignal !== undefined) {
      const stop = () => this.stop();
      userSignal.addEventListener('abort', stop, { once: true });
      this.onStop.push(() => userSignal.removeEventListener('abort', stop));
    }
  }

  get failed(): boolean {
    return this.hasError || this.signal.aborted;
  }

  /** The pool's thread count (what the work is partitioned for). */
  get threads(): number {
    return this.pool.threads;
  }

  acquire(byteLength: number): SharedArrayBuffer {
    const sab = this.pool.buffers.acquire(byteLength);
    this.acquired.push(sab);
    return sab;
  }

  /** Memory for a result the workers write in place, handed to the caller if the call succeeds (see ResultMemory in @kernelkit/core). */
  resultMemory(byteLength: number): { readonly kept: SharedArrayBuffer; readonly forCaller: SharedArrayBuffer } {
    const memory = this.pool.results.take(byteLength);
    this.results.push(memory);
    return memory;
  }

  /**
   * A pooled shared WebAssembly memory of at least `byteLength` bytes, for the shared-memory
   * kernels. `layout` names what the caller leaves in place between calls (e.g. zero padding);
   * `sameLayout` says whether the last call that used this memory left that same layout.
   */
  memory(byteLength: number, layout?: string): { readonly memory: ModuleMemory; readonly sameLayout: boolean } {
    const m = this.pool.memories.acquire(Math.ceil(byteLength / 65536) * 65536);
    this.memories.push(m);
    return { memory: m, sameLayout: trackLayout(m, layout) };
  }

  /**
   * `memory`, for a call whose result the caller gets in place in it (`forCaller`, its handle on
   * the memory): the memory serves nothing else until that result is collected.
   */
  resultModuleMemory(byteLength: number, layout?: string): { readonly memory: ModuleMemory; readonly sameLayout: boolean; readonly forCaller: SharedArrayBuffer } {
    const { kept, forCaller } = this.pool.moduleResults.take(Math.ceil(byteLength / 65536) * 65536);
    this.moduleResults.push({ kept, forCaller });
    return { memory: kept, sameLayout: trackLayout(kept, layout), forCaller };
  }

  input<T extends TypedArray>(a: T): SharedInput<T> {
    return new SharedInput(this, a);
  }

  output<T extends TypedArray>(ctor: Ctor<T>, length: number, out: T | undefined, reuse?: T): SharedOutput<T> {
    return new SharedOutput(this, ctor, length, out, reuse);
  }

  /** Units over `bounds` for this call's tasks to claim (see `ClaimedUnits`). */
  units(bounds: readonly number[]): Units {
    return new Units(this, bounds);
  }

  /** Registers a hook run once when the call fails or is aborted (e.g. release barrier waiters). */
  whenStopped(fn: () => void): void {
    if (this.failed) fn();
    else this.onStop.push(fn);
  }

  private stop(): void {
    const hooks = this.onStop.splice(0);
    for (const h of hooks) h();
  }

  /**
   * Fails the call with `err` (the first failure wins) and cancels what is still queued.
   * `fromWorker`: the error came from a worker (reported as WorkerError with it as `cause`);
   * otherwise it was thrown on this thread (e.g. LimitExceededError, or the caller's onProgress)
   * and is rethrown as it is.
   */
  fail(err: unknown, fromWorker = false): void {
    if (isStopped(err)) {
      this.sawStop = true;
      return;
    }
    if (!this.hasError) {
      this.hasError = true;
      this.error = err;
      this.errorFromWorker = fromWorker;
    }
    if (!this.ac.signal.aborted) this.ac.abort(err);
    this.stop();
  }

  submit<R>(task: Task, onResult?: (r: R) => void, options: SubmitOptions = {}): void {
    if (this.failed) return;
    this.inflight++;
    this.tasks++;
    const signal = options.abortable === false ? null : this.signal;
    this.pool.run<R>(this.op, task, signal).then(
      (r: R) => {
        if (!this.failed && onResult !== undefined) {
          try {
            onResult(r);
          } catch (err) {
            this.fail(err);
          }
        }
        this.settle();
      },
      (err: unknown) => {
        this.fail(err, true);
        this.settle();
      },
    );
  }

  private settle(): void {
    if (--this.inflight === 0) for (const w of this.wake.splice(0)) w();
  }

  /** Waits until no task is in flight; returns false when the call has failed. */
  async drain(): Promise<boolean> {
    while (this.inflight > 0) await new Promise<void>((resolve) => this.wake.push(resolve));
    return !this.failed;
  }

  /**
   * Waits for every task, then throws the call's error as the contract wants it, or runs
   * `beforeRelease` (last reads of pooled buffers) and hands the buffers back to the cache.
   */
  async finish(beforeRelease?: () => void): Promise<void> {
    this.pool.results.collectIfDue();
    this.pool.moduleResults.collectIfDue();
    await this.drain();
    const doneAt = epochMs();
    this.stop();
    if (this.failed || this.sawStop) throw this.outcome();
    beforeRelease?.();
    for (const sab of this.acquired) this.pool.buffers.release(sab);
    this.acquired.length = 0;
    for (const m of this.memories) this.pool.memories.release(m);
    this.memories.length = 0;
    for (const r of this.results.splice(0)) this.pool.results.handOver(r.forCaller, r.kept);
    for (const r of this.moduleResults.splice(0)) this.pool.moduleResults.handOver(r.forCaller, r.kept);
    this.pool.lastStats = { op: this.op, inline: false, tasks: this.tasks, copiedInBytes: this.copiedInBytes, copiedOutBytes: this.copiedOutBytes, ...this.phases(doneAt) };
  }

  private phases(doneAt: number): { phases?: CallPhases } {
    if (this.stagedAt === undefined || this.taskTimes.length === 0) return {};
    const since = (t: number) => t - this.startedAt;
    const tasks = this.taskTimes.map(({ startedAt, endedAt, ...rest }) => ({ startMs: since(startedAt), endMs: since(endedAt), ...rest }));
    return { phases: { stagedMs: since(this.stagedAt), tasks, doneMs: since(doneAt) } };
  }

  private outcome(): Error {
    if (this.userSignal?.aborted) return new AbortError(this.userSignal.reason);
    if (this.pool.disposed) return new DisposedError('piscina');
    const err = this.hasError ? this.error : new Error('a stencil participant stopped without a reported failure');
    if (err instanceof KernelkitError || (this.hasError && !this.errorFromWorker)) return err as Error;
    const msg = errorMessage(err);
    return new WorkerError(`${this.op}: a worker failed: ${msg}`, { cause: err });
  }
}

/** The main thread's side of `ClaimedUnits`: says which units' input is staged. */
export class Units {
  readonly ctrl: SharedArrayBuffer;
  readonly count: number;
  private readonly words: Int32Array;
  constructor(
    private readonly call: Call,
    readonly bounds: readonly number[],
  ) {
    this.count = bounds.length - 1;
    this.ctrl = call.acquire(UNIT_WORDS * 4);
    this.words = new Int32Array(this.ctrl).fill(0);
    call.whenStopped(() => {
      Atomics.store(this.words, UNIT_STOP, 1);
      Atomics.notify(this.words, UNIT_STAGED);
    });
  }

  /**
   * Queues `task` once per thread (each task claims units until none are left), then stages the
   * units' input in order (`stage(u)` puts unit u's in shared memory) and lets them start; with
   * no `stage`, every unit may start at once. `onResult` gets each task's answer (by default a
   * `TaskTimes`, kept for the call's phases).
   */
  run<R = TaskTimes>(task: Task, threads: number, stage?: (u: number) => void, onResult?: (r: R) => void): void {
    const report = onResult ?? ((t: R) => this.call.taskTimes.push(t as TaskTimes));
    for (let i = Math.min(threads, this.count); i > 0; i--) this.call.submit(task, report);
    if (stage === undefined) this.staged(this.count - 1);
    else {
      for (let u = 0; u < this.count; u++) {
        stage(u);
        this.staged(u);
      }
    }
    this.call.stagedAt = epochMs();
  }

  /**
   * `run` with the calling thread as one of the `threads`: queues threads − 1 tasks, stages every
   * unit, then claims units itself with `share` until none are left. `share` runs synchronously
   * (the event loop waits for it); its report joins the workers' in the call's phases, and what it
   * throws fails the call and is rethrown as it is.
   */
  runSharing(task: Task, threads: number, stage: (u: number) => void, share: () => TaskTimes): void {
    this.run(task, threads - 1, stage);
    if (this.call.failed) return;
    try {
      this.call.taskTimes.push({ ...share(), caller: true });
    } catch (err) {
      this.call.fail(err);
    }
  }

  /** Lets the workers start units [0, u]: their input is in shared memory. */
  private staged(u: number): void {
    Atomics.store(this.words, UNIT_STAGED, u + 1);
    // A wake-up is a system call, and a woken thread may take this thread's core.
    if (Atomics.load(this.words, UNIT_WAITING) !== 0) Atomics.notify(this.words, UNIT_STAGED);
  }
}
