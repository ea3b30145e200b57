import { readFileSync } from 'node:fs';
import { wasmSupport, type KernelExports, type WasmModule } from './runtime.js';

/**
 * The same kernels (assembly/kernels.ts) built to import a shared `env.memory` instead of owning
 * one: several threads can then run them on one memory that the calling thread fills, with no copy
 * into each thread's own memory. Same flavour (relaxed or plain SIMD) as `wasmSupport`.
 */
const PLAIN_URL = new URL('../../dist/kernels-simd-shared.wasm', import.meta.url);
const RELAXED_URL = new URL('../../dist/kernels-relaxed-simd-shared.wasm', import.meta.url);

/** The parts of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => WasmModule;
  readonly Instance: new (module: WasmModule, imports: object) => { readonly exports: unknown };
  readonly Memory: new (descriptor: { initial: number; maximum: number; shared: true }) => SharedWasmMemory;
}
const wasmApi = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

/** A shared WebAssembly.Memory: its buffer is a SharedArrayBuffer, and growing it never detaches it. */
export interface SharedWasmMemory {
  readonly buffer: SharedArrayBuffer;
  grow(pages: number): number;
}

/**
 * Largest shared memory the callers ask for: half of what wasm32 can address, so that reserving
 * it does not fail on a machine with a tight address-space or overcommit limit; larger work runs
 * in bands in each thread's own memory instead.
 */
export const SHARED_MEMORY_MAX_BYTES = 2 ** 31;

let shared: WasmModule | { readonly unavailable: string } | undefined;

/** The shared-memory build of the kernels, compiled once per thread; `unavailable` says why not. */
export function sharedWasmModule(): WasmModule | { readonly unavailable: string } {
  if (shared !== undefined) return shared;
  const s = wasmSupport();
  if (!('module' in s)) return (shared = s);
  const url = s.flavour === 'relaxed-simd' ? RELAXED_URL : PLAIN_URL;
  try {
    shared = new wasmApi!.Module(readFileSync(url));
  } catch (e) {
    shared = { unavailable: `the shared-memory WebAssembly kernels could not be loaded from ${url.pathname} (${e instanceof Error ? e.message : String(e)}); run npm run build` };
  }
  return shared;
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
