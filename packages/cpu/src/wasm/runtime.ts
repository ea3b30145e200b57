import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { readEnumEnv, UnsupportedError, errorMessage } from '@kernelkit/core';

/**
 * The WebAssembly SIMD kernels (assembly/kernels.ts), built by `npm run build` into dist/ in two
 * flavours: plain 128-bit SIMD and relaxed SIMD (fused multiply-add). Both import a shared
 * `env.memory`: growing a module's own memory detaches its old ArrayBuffer, and once any
 * ArrayBuffer is detached V8 runs typed-array code slower for the rest of the thread, the
 * caller's own code included; a shared memory grows without detaching. The paths are relative to
 * the package root, so they resolve the same from src/wasm/ (tests) and dist/wasm/ (built code).
 */
const PLAIN_URL = new URL('../../dist/kernels-simd.wasm', import.meta.url);
const RELAXED_URL = new URL('../../dist/kernels-relaxed-simd.wasm', import.meta.url);

/** Smallest modules that use one v128 instruction (`f32x4.splat`) and one relaxed one (`f32x4.relaxed_madd`). */
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 11, 1, 9, 0, 67, 0, 0, 0, 0, 253, 19, 11]);
const RELAXED_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 28, 1, 26, 0, 67, 0, 0, 0, 0, 253, 19, 67, 0, 0, 0, 0, 253, 19, 67, 0, 0, 0, 0, 253, 19, 253, 133, 2, 11,
]);

/** The parts of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  readonly Module: new (bytes: Uint8Array) => WasmModule;
  readonly Instance: new (module: WasmModule, imports: object) => { readonly exports: unknown };
  readonly Memory: new (descriptor: { initial: number; maximum: number; shared: true }) => SharedWasmMemory;
}

/** A shared WebAssembly.Memory: its buffer is a SharedArrayBuffer, and growing it never detaches it. */
export interface SharedWasmMemory {
  readonly buffer: SharedArrayBuffer;
  grow(pages: number): number;
}
/** A compiled module (opaque here). */
export type WasmModule = object & { readonly __wasmModule?: never };
const wasmApi = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

export interface KernelExports {
  conv2d(inp: number, inStride: number, filter: number, k: number, out: number, rows: number, width: number): void;
  convLayer(inp: number, channels: number, height: number, width: number, weights: number, maps: number, k: number, bias: number, relu: number, out: number): void;
  stencilF32(src: number, dst: number, nx: number, ny: number, nz: number, c0: number, c1: number, copy: number, zStart: number, zEnd: number): void;
  stencilF64(src: number, dst: number, nx: number, ny: number, nz: number, c0: number, c1: number, copy: number, zStart: number, zEnd: number): void;
  scanI32(p: number, n: number, carry: number, exclusive: number): number;
  scanF32(p: number, n: number, carry: number, exclusive: number): number;
  scanF64(p: number, n: number, carry: number, exclusive: number): number;
  sumI32(p: number, n: number): number;
  sumF32(p: number, n: number): number;
  sumF64(p: number, n: number): number;
  gridPruned(header: number, out: number, cap: number): number;
}

const PAGE = 65536;

/** A shared memory of `initial` pages, growable to `maximum`. */
export function sharedMemory(initial: number, maximum: number): SharedWasmMemory {
  return new wasmApi!.Memory({ initial, maximum, shared: true });
}

/** An instance of the kernels over `memory`; addresses are byte offsets into it. */
export function sharedKernels(module: WasmModule, memory: SharedWasmMemory): KernelExports {
  return new wasmApi!.Instance(module, { env: { memory } }).exports as KernelExports;
}

/** How much linear memory one band of work may use; larger inputs are processed in bands. */
export const BAND_BYTES = 64 * 2 ** 20;

/**
 * Most linear memory one instance may grow to: the largest reservation (both stencil grids,
 * 4 · `BAND_BYTES`) twice over. A shared memory reserves its maximum's address space up front,
 * so it is kept far under wasm32's 4 GiB.
 */
export const INSTANCE_MAX_BYTES = 8 * BAND_BYTES;

/**
 * One instance of the kernels with a memory of its own (shared, so that growing it detaches
 * nothing). The memory grows to what a call needs and is reused by the next call; the callers
 * band their work so that a call needs at most a bounded amount (see `BAND_BYTES`).
 */
export class WasmKernels {
  readonly k: KernelExports;
  private readonly memory: SharedWasmMemory;
  private f32view: Float32Array = new Float32Array(0);
  private f64view: Float64Array = new Float64Array(0);
  constructor(module: WasmModule) {
    this.memory = sharedMemory(1, INSTANCE_MAX_BYTES / PAGE);
    this.k = sharedKernels(module, this.memory);
  }
  /** Grows the memory to at least `bytes`. Views taken before a call to `reserve` stay valid but do not see the new part. */
  reserve(bytes: number): void {
    if (bytes > INSTANCE_MAX_BYTES) throw new RangeError(`WasmKernels.reserve: ${bytes} bytes asked, at most ${INSTANCE_MAX_BYTES} (callers band their work)`);
    const have = this.memory.buffer.byteLength;
    if (bytes > have) this.memory.grow(Math.ceil((bytes - have) / PAGE));
  }
  get bytes(): number {
    return this.memory.buffer.byteLength;
  }
  /** The memory (a new SharedArrayBuffer object after growth). */
  get buffer(): SharedArrayBuffer {
    return this.memory.buffer;
  }
  /** The memory as f32 (recreated after growth). */
  get f32(): Float32Array {
    if (this.f32view.buffer !== this.memory.buffer) this.f32view = new Float32Array(this.memory.buffer);
    return this.f32view;
  }
  get f64(): Float64Array {
    if (this.f64view.buffer !== this.memory.buffer) this.f64view = new Float64Array(this.memory.buffer);
    return this.f64view;
  }
}

/** An idle instance whose memory grew past this is dropped rather than kept for the next call. */
const KEEP_BYTES = 2 * BAND_BYTES;

export interface WasmSupport {
  /** What the `wasm-simd` variants run: `'relaxed-simd'` (fused multiply-add) or `'simd'`. */
  readonly flavour: 'relaxed-simd' | 'simd';
  readonly module: WasmModule;
  /** Set where `KERNELKIT_WASM_SIMD` chose the flavour: what it asked and did. */
  readonly chosenBy?: string;
}

let support: WasmSupport | { readonly unavailable: string } | undefined;

/** Whether this runtime validates relaxed SIMD now (without `KERNELKIT_WASM_SIMD=relaxed`, as it ships). */
export function relaxedSimdValidates(): boolean {
  return wasmApi !== undefined && wasmApi.validate(RELAXED_PROBE);
}

/** `KERNELKIT_WASM_SIMD`: which build the `wasm-simd` variants run (unset: relaxed where the runtime validates it). */
export const WASM_SIMD_ENV = 'KERNELKIT_WASM_SIMD';
const WASM_SIMD_CHOICES = ['plain', 'relaxed'] as const;
/** The V8 flag that turns relaxed SIMD on in runtimes that ship it off (Node 20). */
const RELAXED_SIMD_FLAG = '--experimental-wasm-relaxed-simd';

/**
 * Detects WebAssembly SIMD once per thread and compiles the module; `unavailable` says why not.
 * `KERNELKIT_WASM_SIMD=plain` runs the plain build (its results do not depend on whether the CPU
 * fuses multiply-adds); `relaxed` runs the relaxed build, on Node 20 by setting V8's
 * `--experimental-wasm-relaxed-simd` for the whole process, and throws `UnsupportedError` where the
 * runtime cannot validate it.
 */
export function wasmSupport(): WasmSupport | { readonly unavailable: string } {
  if (support !== undefined) return support;
  const asked = readEnumEnv(WASM_SIMD_ENV, WASM_SIMD_CHOICES);
  if (wasmApi === undefined || !wasmApi.validate(SIMD_PROBE)) {
    if (asked !== undefined) throw new UnsupportedError(`${asked} asked, but this runtime has no WebAssembly SIMD`, WASM_SIMD_ENV);
    support = { unavailable: 'this runtime has no WebAssembly SIMD' };
    return support;
  }
  let relaxed = asked !== 'plain' && relaxedSimdValidates();
  let enabled = false;
  if (asked === 'relaxed' && !relaxed) {
    setFlagsFromString(RELAXED_SIMD_FLAG);
    relaxed = enabled = relaxedSimdValidates();
    if (!relaxed) throw new UnsupportedError(`relaxed asked, but this runtime does not validate relaxed SIMD, even with ${RELAXED_SIMD_FLAG}`, WASM_SIMD_ENV);
  }
  const url = relaxed ? RELAXED_URL : PLAIN_URL;
  const how = asked === undefined ? undefined : enabled ? `${WASM_SIMD_ENV}=relaxed, which set V8's ${RELAXED_SIMD_FLAG}` : `${WASM_SIMD_ENV}=${asked}`;
  try {
    support = { flavour: relaxed ? 'relaxed-simd' : 'simd', module: new wasmApi.Module(readFileSync(url)), ...(how === undefined ? {} : { chosenBy: how }) };
  } catch (e) {
    support = { unavailable: `the WebAssembly kernels could not be loaded from ${url.pathname} (${errorMessage(e)}); run npm run build` };
  }
  return support;
}

/** What `wasmSupport()` gave, in words, for a backend's description. */
export function describeKernels(s: WasmSupport | { readonly unavailable: string }): string {
  if ('unavailable' in s) return `JavaScript kernels only (${s.unavailable})`;
  const kind = s.flavour === 'relaxed-simd' ? 'relaxed SIMD (fused multiply-add)' : 'SIMD';
  return `WebAssembly ${kind} kernels${s.chosenBy === undefined ? '' : ` (${s.chosenBy})`}`;
}

const idle: WasmKernels[] = [];

/**
 * Runs `fn` with an instance no other call is using: calls that yield to the event loop between
 * bands may overlap, and each needs its memory to itself. Idle instances are kept (at most two,
 * none whose memory grew past `KEEP_BYTES`), so memory is reused across calls and backends.
 */
export function withKernels<T>(s: WasmSupport, fn: (w: WasmKernels) => T): T {
  const w = idle.pop() ?? new WasmKernels(s.module);
  let result: T;
  try {
    result = fn(w);
  } catch (e) {
    release(w);
    throw e;
  }
  if (result instanceof Promise) return result.finally(() => release(w)) as T;
  release(w);
  return result;
}

function release(w: WasmKernels): void {
  if (idle.length < 2 && w.bytes <= KEEP_BYTES) idle.push(w);
}
