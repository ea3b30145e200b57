import { sharedMemory, type SharedWasmMemory } from './runtime.js';

export { sharedKernels, type SharedWasmMemory } from './runtime.js';

/**
 * Largest shared memory the callers ask for: half of what wasm32 can address, so that reserving
 * it does not fail on a machine with a tight address-space or overcommit limit; larger work runs
 * in bands in each thread's own memory instead.
 */
export const SHARED_MEMORY_MAX_BYTES = 2 ** 31;

/** A shared memory of at least `bytes` (rounded up to whole pages), not growable past that. */
export function newSharedMemory(bytes: number): SharedWasmMemory {
  const pages = Math.max(1, Math.ceil(bytes / 65536));
  return sharedMemory(pages, pages);
}
