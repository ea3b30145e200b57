import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { BufferCache } from './buffer-cache.js';
import { promptCollection } from './collect.js';

/** Result bytes callers may hold uncollected before a new result prompts a collection (see `take`). */
export const HELD_RESULT_BYTES = 64 * 2 ** 20;
/**
 * A prompted collection marks the whole JavaScript heap, and results handed back save page faults
 * in proportion to their size: so the results held between prompts are also at least this many
 * times the heap in use, else in an application with a large heap the collections cost more than
 * the faults they save.
 */
export const HELD_PER_HEAP_BYTE = 4;
/** Results from this size on are kept for reuse; smaller ones come from the allocator's own free lists. */
export const RESULT_MIN_BYTES = 1 << 20;
/** Most bytes a backend keeps free of each kind of reusable memory (buffers, results): min(2 GiB, RAM/8). */
export const KEEP_BYTES = Math.min(2 ** 31, Math.floor(totalmem() / 8));

/**
 * Result bytes callers hold before a ResultMemory keeping up to `maxBytes` free prompts the
 * collection that hands dropped results back: until then every result is fresh memory.
 */
export function resultsHeldBetweenCollections(maxBytes: number = KEEP_BYTES, heapBytes: number = getHeapStatistics().used_heap_size): number {
  return Math.max(HELD_RESULT_BYTES, Math.min(maxBytes, HELD_PER_HEAP_BYTE * heapBytes));
}

/**
 * Calls returning a fresh host result of `resultBytes` until one comes from memory an earlier,
 * dropped result used, as in a loop's settled calls: 0 under RESULT_MIN_BYTES (those come from the
 * allocator's free lists). Until callers have held `held` bytes every result is fresh; the take
 * past that bound prompts the collection, and the dropped results come back a call or two later.
 */
export function callsUntilResultsReused(resultBytes: number, held: number = resultsHeldBetweenCollections()): number {
  return resultBytes < RESULT_MIN_BYTES ? 0 : Math.floor(held / resultBytes) + 3;
}

/**
 * Memory for the results a backend returns, reused once the caller drops them.
 *
 * A fresh result array costs a page fault per 4 KiB on its first write, more than the copy or
 * kernel that fills it on large outputs. So each result's memory (a SharedArrayBuffer) is kept
 * here, and the caller gets a handle of its own on it (a clone: the same memory, another object).
 * Once the caller's handle is garbage-collected the memory serves the next result of its size,
 * already faulted in, whatever other handles (a worker's, a copy's) still exist. A result's
 * memory is handed over only once nothing but the caller will write it (`handOver`).
 *
 * What is kept is a SharedArrayBuffer, or (`M`) an object owning one, such as a shared
 * WebAssembly memory whose kernels wrote the result in place: then `make` and `bufferOf` say how
 * to make one and which buffer the caller's handle clones.
 */
export class ResultMemory<M extends object = SharedArrayBuffer> {
  private readonly free: BufferCache<M>;
  /** Bytes handed to callers whose handles have not been collected yet. */
  private heldBytes = 0;
  /** `heldBytes` at the last prompt: the next comes once callers hold another `promptEvery()` bytes. */
  private heldAtPrompt = 0;
  /** Non-zero: `collectIfDue` prompts a collection this large. */
  private collectionDue = 0;
  private closed = false;
  private readonly counts = { takes: 0, reused: 0, prompts: 0 };
  private readonly prompt: (bytes: number) => void;
  private readonly heapBytes: () => number;
  private readonly registry = new FinalizationRegistry<M>((memory) => this.giveBack(memory));
  private readonly bufferOf: (m: M) => SharedArrayBuffer;

  /**
   * `maxBytes`: most bytes kept free between calls; `make`: a new one (the Piscina pool's carry
   * ids); `bufferOf`: its buffer (default: it is one); `prompt`: how a collection is prompted
   * (tests watch it).
   */
  constructor(
    private readonly maxBytes: number,
    options: {
      readonly make?: (byteLength: number) => M;
      readonly bufferOf?: (m: M) => SharedArrayBuffer;
      readonly prompt?: (bytes: number) => void;
      readonly heapBytes?: () => number;
    } = {},
  ) {
    // Without make and bufferOf, M is SharedArrayBuffer (the default type argument).
    this.bufferOf = options.bufferOf ?? ((m) => m as unknown as SharedArrayBuffer);
    const make = options.make ?? ((n: number) => new SharedArrayBuffer(n) as unknown as M);
    this.free = new BufferCache(maxBytes, make, (m) => this.bufferOf(m).byteLength);
    this.prompt = options.prompt ?? promptCollection;
    this.heapBytes = options.heapBytes ?? (() => getHeapStatistics().used_heap_size);
  }

  /**
   * Held bytes between prompts: HELD_RESULT_BYTES, or HELD_PER_HEAP_BYTE times the heap in use
   * when that is more, but never past what this keeps free (`maxBytes`), which is all a
   * collection could hand back for reuse.
   */
  private promptEvery(): number {
    return resultsHeldBetweenCollections(this.maxBytes, this.heapBytes());
  }

  /**
   * Memory of `byteLength` bytes (`kept`, the handle this keeps and the writers use) and the
   * caller's handle on it; `reused` when it served an earlier result (so it is faulted in). Its
   * content is whatever the last result left: the ops using it write every element. A
   * collection this finds due waits for `collectIfDue`.
   */
  take(byteLength: number): { readonly kept: M; readonly forCaller: SharedArrayBuffer; readonly reused: boolean } {
    const before = this.free.keptBytes;
    const kept = this.free.acquire(byteLength);
    // The collection that hands dropped results back, as large as what callers hold.
    // The fixed bound first: the heap's size is read only once past it.
    const sincePrompt = this.heldBytes - this.heldAtPrompt;
    if (sincePrompt > HELD_RESULT_BYTES && sincePrompt > this.promptEvery()) {
      this.heldAtPrompt = this.heldBytes;
      this.collectionDue = this.heldBytes;
    }
    const reused = this.free.keptBytes < before;
    this.counts.takes++;
    if (reused) this.counts.reused++;
    return { kept, forCaller: structuredClone(this.bufferOf(kept)), reused };
  }

  /**
   * Prompts the collection `take` found due, if any. Calls run it once their work is under way
   * (tasks queued, GPU commands submitted), so that it overlaps that work instead of delaying it.
   */
  collectIfDue(): void {
    if (this.collectionDue === 0) return;
    const bytes = this.collectionDue;
    this.collectionDue = 0;
    this.counts.prompts++;
    this.prompt(bytes);
  }

  /**
   * After the call succeeded: the memory comes back once the caller's handle is collected. A
   * failed call never hands it over, since a stopped writer might still be writing there.
   */
  handOver(forCaller: SharedArrayBuffer, kept: M): void {
    if (this.closed) return;
    this.registry.register(forCaller, kept);
    this.heldBytes += this.bufferOf(kept).byteLength;
  }

  /** Bytes kept free now (testing). */
  get keptBytes(): number {
    return this.free.keptBytes;
  }

  /** Bytes handed to callers whose handles have not been collected yet. */
  get outstandingBytes(): number {
    return this.heldBytes;
  }

  /** Results taken, how many of them on memory an earlier result had used, and collections prompted, since this was made. */
  get stats(): ResultMemoryStats {
    return { ...this.counts, keptBytes: this.free.keptBytes, outstandingBytes: this.heldBytes };
  }

  /** Drops the free memory; memory handed over before comes back to nobody. */
  close(): void {
    this.closed = true;
    this.free.clear();
  }

  private giveBack(memory: M): void {
    this.heldBytes -= this.bufferOf(memory).byteLength;
    this.heldAtPrompt = Math.min(this.heldAtPrompt, this.heldBytes);
    if (!this.closed) this.free.release(memory);
  }
}

/** What a ResultMemory has done (see ResultMemory.stats). */
export interface ResultMemoryStats {
  readonly takes: number;
  readonly reused: number;
  readonly prompts: number;
  readonly keptBytes: number;
  readonly outstandingBytes: number;
}

/** A typed array constructor a result can be made with: of a length, or over shared memory. */
export interface ResultCtor<T> {
  new (length: number): T;
  new (buffer: SharedArrayBuffer): T;
  readonly BYTES_PER_ELEMENT: number;
}

/**
 * A backend's result arrays: from `minBytes` on, on memory a `ResultMemory` keeps (smaller ones
 * come from the allocator's own free lists). The backend hands a result over once its call
 * succeeded (`handOver`, which the backend kit calls); until then its memory serves nothing else.
 */
export class ResultArrays {
  private readonly memory: ResultMemory;
  /** Results of calls not yet succeeded: the caller's buffer and the memory kept for it. */
  private readonly unhanded = new WeakMap<ArrayBufferLike, SharedArrayBuffer>();

  constructor(
    readonly minBytes: number,
    maxBytes: number,
    options?: { readonly prompt?: (bytes: number) => void; readonly heapBytes?: () => number },
  ) {
    this.memory = new ResultMemory(maxBytes, options);
  }

  /**
   * A result of `length` elements, its content undefined: the op writes every element, as it
   * does into a caller's `out`. `onFresh` sees memory that serves its first result (to have its
   * pages faulted in early), with the caller's handle on it.
   */
  array<T>(ctor: ResultCtor<T>, length: number, onFresh?: (kept: SharedArrayBuffer, forCaller: SharedArrayBuffer) => void): T {
    const bytes = length * ctor.BYTES_PER_ELEMENT;
    if (bytes < this.minBytes) return new ctor(length);
    const r = this.memory.take(bytes);
    if (!r.reused) onFresh?.(r.kept, r.forCaller);
    this.unhanded.set(r.forCaller, r.kept);
    return new ctor(r.forCaller);
  }

  /** After a call succeeded with `data` as its result: memory from `array` comes back once the caller's array is collected. */
  handOver(data: unknown): void {
    if (!ArrayBuffer.isView(data)) return;
    const kept = this.unhanded.get(data.buffer);
    if (kept === undefined) return;
    this.unhanded.delete(data.buffer);
    this.memory.handOver(data.buffer as SharedArrayBuffer, kept);
  }

  /** Prompts the collection that hands dropped results back, when one is due (see ResultMemory.collectIfDue). */
  collectIfDue(): void {
    this.memory.collectIfDue();
  }

  /** Bytes of dropped results kept for reuse now. */
  get keptBytes(): number {
    return this.memory.keptBytes;
  }

  /** Bytes of results handed over whose arrays have not been collected yet. */
  get outstandingBytes(): number {
    return this.memory.outstandingBytes;
  }

  /** Results of `minBytes` and more taken, reused and prompted collections (see ResultMemory.stats). */
  get stats(): ResultMemoryStats {
    return this.memory.stats;
  }

  close(): void {
    this.memory.close();
  }
}
