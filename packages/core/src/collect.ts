/**
 * Prompts a full garbage collection on this thread: V8 counts an ArrayBuffer's memory towards
 * collecting, but not a SharedArrayBuffer's, so a thread holding dropped handles on shared memory
 * may never collect them. Only a full collection finds dropped handles, and V8 runs one when the
 * ArrayBuffer memory alive passes a limit that grows with the heap: `bytes` must pass it (one
 * result's size, freed again at the next young-generation sweep, did not). Past glibc's largest
 * mmap threshold (32 MiB) the allocation is fresh zero pages, so never touching it costs nothing.
 */
export function promptCollection(bytes: number): void {
  try {
    void new ArrayBuffer(bytes);
  } catch {
    // No address space for it: collection comes later, as it would without the prompt.
  }
}
