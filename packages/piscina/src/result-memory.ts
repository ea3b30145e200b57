import { BufferCache } from './buffer-cache.js';
import { pooledSharedBuffer } from './buffer-ids.js';
import { promptCollection } from './collect.js';

/**
 * Memory for results the workers write in place (a SharedArrayBuffer sent to every worker).
 *
 * A worker's handle on such a buffer keeps its memory alive until that worker's own garbage
 * collection, which its small heap seldom runs: a loop of calls held every result it had dropped
 * (gigabytes after a few hundred calls) until then. So each result's memory is kept here, and the
 * caller gets a handle of its own on it (a clone: the same memory, another object). Once the
 * caller's handle is collected the memory serves the next result of its size, whatever stale
 * handles the workers still hold, and a reused result is already faulted in.
 */
/** Result bytes callers may hold uncollected before a new result prompts a collection (see `take`). */
export const HELD_RESULT_BYTES = 64 * 2 ** 20;

export class ResultMemory {
  private readonly free: BufferCache<SharedArrayBuffer>;
  /** Bytes handed to callers whose handles have not been collected yet. */
  private heldBytes = 0;
  /** `heldBytes` at the last prompt: the next comes once callers hold another `HELD_RESULT_BYTES`. */
  private heldAtPrompt = 0;
  /** Non-zero: `collectIfDue` prompts a collection this large. */
  private collectionDue = 0;
  private closed = false;
  private readonly registry = new FinalizationRegistry<SharedArrayBuffer>((memory) => this.giveBack(memory));

  /** `maxBytes`: most bytes kept free between calls; `prompt`: how a collection is prompted (tests watch it). */
  constructor(
    maxBytes: number,
    private readonly prompt: (bytes: number) => void = promptCollection,
  ) {
    this.free = new BufferCache(maxBytes, pooledSharedBuffer, (b) => b.byteLength);
  }

  /**
   * Memory of `byteLength` bytes for the workers to write, and the caller's handle on it. Its
   * content is whatever the last result left: the ops using it write every element. A collection
   * this finds due waits for `collectIfDue`.
   */
  take(byteLength: number): { readonly forWorkers: SharedArrayBuffer; readonly forCaller: SharedArrayBuffer } {
    const forWorkers = this.free.acquire(byteLength);
    // The collection that hands dropped results back, as large as what callers hold.
    if (this.heldBytes > this.heldAtPrompt + HELD_RESULT_BYTES) {
      this.heldAtPrompt = this.heldBytes;
      this.collectionDue = this.heldBytes;
    }
    return { forWorkers, forCaller: structuredClone(forWorkers) };
  }

  /**
   * Prompts the collection `take` found due, if any. Calls run it once their tasks are queued, so
   * that the collection overlaps the workers' work instead of coming before it.
   */
  collectIfDue(): void {
    if (this.collectionDue === 0) return;
    const bytes = this.collectionDue;
    this.collectionDue = 0;
    this.prompt(bytes);
  }

  /**
   * After the call succeeded: the memory comes back once the caller's handle is collected. A
   * failed call never hands it over, since a stopped worker might still be writing there.
   */
  handOver(forCaller: SharedArrayBuffer, forWorkers: SharedArrayBuffer): void {
    if (this.closed) return;
    this.registry.register(forCaller, forWorkers);
    this.heldBytes += forWorkers.byteLength;
  }

  /** Bytes kept free now (testing). */
  get keptBytes(): number {
    return this.free.keptBytes;
  }

  /** Drops the free memory; memory handed over before comes back to nobody. */
  close(): void {
    this.closed = true;
    this.free.clear();
  }

  private giveBack(memory: SharedArrayBuffer): void {
    this.heldBytes -= memory.byteLength;
    this.heldAtPrompt = Math.min(this.heldAtPrompt, this.heldBytes);
    if (!this.closed) this.free.release(memory);
  }
}
