import { wasmSupport, type KernelExports, type SharedWasmMemory, type WasmModule } from './runtime.js';

export type { SharedWasmMemory } from './runtime.js';

/** The parts of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
interface WasmApi {
  readonly Instance: new (module: WasmModule, imports: object) => { readonly exports: unknown };
  readonly Memory: new (descriptor: { initial: number; maximum: number; shared: true }) => SharedWasmMemory;
}
const wasmApi = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

/**
 * Largest shared memory the callers ask for: half of what wasm32 can address, so that reserving
 * it does not fail on a machine with a tight address-space or overcommit limit; larger work runs
 * in bands in each thread's own memory instead.
 */
export const SHARED_MEMORY_MAX_BYTES = 2 ** 31;

/**
 * The kernels for memories several threads share: the module `wasmSupport` compiled (every
 * build imports its memory), so a worker runs them on a memory the calling thread filled, with
 * no copy into its own; `unavailable` says why not.
 */
export function sharedWasmModule(): WasmModule | { readonly unavailable: string } {
  const s = wasmSupport();
  return 'module' in s ? s.module : s;
}

/** A shared memory of at least `bytes` (rounded up to whole pages), not growable past that. */
export function newSharedMemory(bytes: number): SharedWasmMemory {
  const pages = Math.max(1, Math.ceil(bytes / 65536));
  return new wasmApi!.Memory({ initial: pages, maximum: pages, shared: true });
}

/** An instance of the shared-memory kernels over `memory`; addresses are byte offsets into it. */
export function sharedKernels(module: WasmModule, memory: SharedWasmMemory): KernelExports {
  return new wasmApi!.Instance(module, { env: { memory } }).exports as KernelExports;
}
