import type { ConvLayerDims, SharedWasmMemory, WasmSupport } from '@kernelkit/cpu';
import type { GridSearchProblem, ScanDtype, StencilBoundary } from '@kernelkit/ops';

/**
 * Messages between the main thread and the workers. Big arrays travel as `Ref`s into
 * SharedArrayBuffers (the buffer handle is shared, never copied); everything else is a few numbers.
 */
/**
 * What the pool passes every worker at start: the module the main thread compiled, when it has
 * one. It imports its memory, so it serves a worker's own instance and `ModuleMemory` alike.
 */
export interface PoolWorkerData {
  readonly wasmModule?: WasmSupport['module'];
}

/**
 * A shared WebAssembly memory that the main thread fills and the workers' instances of the
 * shared-memory kernels run on in place. `id` names it across threads (each message carries a
 * new wrapper of the same memory), so a worker instantiates the kernels once per memory.
 */
export interface ModuleMemory {
  readonly memory: SharedWasmMemory;
  readonly id: number;
}

export type Dtype = 'f32' | 'f64' | 'u32' | 'i32';

export interface Ref {
  readonly buf: SharedArrayBuffer;
  /** Byte offset of the view. */
  readonly off: number;
  /** Length in elements. */
  readonly len: number;
  readonly dtype: Dtype;
  /** Set for the pool's own buffers, which come back call after call (see buffer-ids.ts). */
  readonly id?: number;
}

/**
 * Work split into units that the call's tasks (one per thread) claim in turn from a shared
 * counter: the threads stay busy until the last unit without a round trip to the main thread
 * per unit. Unit `u` covers [bounds[u], bounds[u + 1]); `ctrl` holds the `UNIT_*` words.
 */
export interface ClaimedUnits {
  readonly bounds: readonly number[];
  readonly ctrl: SharedArrayBuffer;
}

/** Milliseconds since the epoch, comparable across threads: the clock of `TaskTimes` and `CallPhases`. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

/**
 * What a claimed-units task reports back: where its time went. `startedAt` / `endedAt` are
 * `epochMs()` readings on its worker; the rest are durations inside the task.
 */
export interface TaskTimes {
  readonly startedAt: number;
  readonly endedAt: number;
  /** Units this task ran. */
  readonly units: number;
  /** Waiting for the main thread to stage a claimed unit's input. */
  readonly waitMs: number;
  /** Running the kernel on its units. */
  readonly kernelMs: number;
  /** Copying its units' output from module memory into the result. */
  readonly copyMs: number;
  /** Set when the calling thread ran these units (its share of the call, see `Units.runSharing`). */
  readonly caller?: boolean;
}

// Control words of claimed units (an Int32Array over `ClaimedUnits.ctrl`).
/** The next unit to claim. */
export const UNIT_NEXT = 0;
/** Units whose input the main thread has put in shared memory (a worker waits for it). */
export const UNIT_STAGED = 1;
/** Non-zero: the call failed or was aborted; a worker waiting for staged input stops. */
export const UNIT_STOP = 2;
/** Workers waiting for staged input: the main thread wakes them only when there are any. */
export const UNIT_WAITING = 3;
/** How many control words there are. */
export const UNIT_WORDS = 4;

/** Rows [bounds[u], bounds[u + 1]) of the flattened (batch·height) rows per unit. */
export interface Conv2dTask extends ClaimedUnits {
  readonly kind: 'conv2d';
  readonly input: Ref;
  readonly filter: Ref;
  readonly out: Ref;
  readonly height: number;
  readonly width: number;
  readonly k: number;
  /** Run the WebAssembly SIMD kernel (`wasm-simd` variant) instead of the JavaScript one. */
  readonly simd: boolean;
}

/**
 * conv2d on the shared-memory kernels: rows [bounds[u], bounds[u + 1]) of the flattened
 * (batch·height) rows per unit, computed in `memory`. Image b sits zero-padded at float offset
 * `images[b]` (r zero rows above, r + 2 below, r zero columns left and 8 + r right, `stride`
 * floats per row); the filter at `filterAt`; output row R at `outAt + R·width`. With `out`,
 * the worker also copies its rows there (the result, or a shared `out`).
 */
export interface Conv2dModuleTask extends ClaimedUnits {
  readonly kind: 'conv2dModule';
  readonly memory: ModuleMemory;
  readonly images: readonly number[];
  readonly stride: number;
  readonly filterAt: number;
  readonly outAt: number;
  readonly out: Ref | undefined;
  readonly height: number;
  readonly width: number;
  readonly k: number;
}

/**
 * convLayer on the shared-memory kernels: planes [bounds[u], bounds[u + 1]) per unit, each unit
 * starting at a multiple of 4 maps within its image. In `memory` (float offsets): the weights of
 * all maps packed from map 0 at `weightsAt` (`packWeights`), the bias (zeros when none, padded)
 * at `biasAt`, the images one after the other from `inputAt`, the planes from `outAt`.
 */
export interface ConvLayerModuleTask extends ClaimedUnits {
  readonly kind: 'convLayerModule';
  readonly memory: ModuleMemory;
  readonly weightsAt: number;
  readonly biasAt: number;
  readonly inputAt: number;
  readonly outAt: number;
  readonly out: Ref | undefined;
  readonly relu: boolean;
  readonly dims: ConvLayerDims;
}

/** Output planes [bounds[u], bounds[u + 1]) of the flattened (batch·maps) planes per unit. */
export interface ConvLayerTask extends ClaimedUnits {
  readonly kind: 'convLayer';
  readonly input: Ref;
  readonly weights: Ref;
  readonly bias: Ref | undefined;
  readonly relu: boolean;
  readonly out: Ref;
  readonly dims: ConvLayerDims;
  /** Run the WebAssembly SIMD kernel (`wasm-simd` variant) instead of the JavaScript one. */
  readonly simd: boolean;
}

interface StencilCommon {
  readonly nx: number;
  readonly ny: number;
  readonly nz: number;
  readonly c0: number;
  readonly c1: number;
  readonly boundary: StencilBoundary;
}

/** One step of one z-slab (the 'slabs-per-step' strategy). */
export interface StencilStepTask extends StencilCommon {
  readonly kind: 'stencilStep';
  readonly src: Ref;
  readonly dst: Ref;
  readonly zStart: number;
  readonly zEnd: number;
}

/**
 * All steps of one z-slab, with a barrier between steps (the 'slabs' and 'wasm-simd' strategies).
 * Step t reads `t === 0 ? input : (t odd ? a : b)` and writes `t even ? a : b`.
 */
export interface StencilSlabTask extends StencilCommon {
  readonly kind: 'stencilSlab';
  readonly input: Ref;
  readonly a: Ref;
  readonly b: Ref;
  readonly steps: number;
  readonly zStart: number;
  readonly zEnd: number;
  /** Int32Array over this SAB: see `CTRL_*`. */
  readonly ctrl: SharedArrayBuffer;
  readonly participants: number;
  /**
   * Per z-plane flags (Int32Array, length nz), present when the main thread is still copying the
   * input into shared memory: a participant reads plane z only once flag z is 1.
   */
  readonly inReady: SharedArrayBuffer | undefined;
  /**
   * Run the WebAssembly SIMD kernel: the slab and its halo planes stay in the worker's module
   * memory for every step; only the slab's first and last planes go out to `a`/`b` after a step
   * (for the neighbours) and the neighbours' planes come back in after the barrier.
   */
  readonly simd: boolean;
}

/** Control words of a stencil barrier. */
export const CTRL_ARRIVED = 0;
export const CTRL_GENERATION = 1;
/** Non-zero: stop (the call was aborted or a participant failed). */
export const CTRL_STOP = 2;
export const CTRL_WORDS = 4;

/** Message of the error a participant throws when it stops because another one failed or the call was aborted. */
export const STOPPED_MESSAGE = 'kernelkit: stencil participant stopped';

export interface ScanSumTask {
  readonly kind: 'scanSum';
  readonly input: Ref;
  readonly start: number;
  readonly end: number;
  readonly dtype: ScanDtype;
}

export interface ScanLocalTask {
  readonly kind: 'scanLocal';
  readonly input: Ref;
  readonly out: Ref;
  readonly start: number;
  readonly end: number;
  readonly carry: number;
  readonly exclusive: boolean;
  readonly dtype: ScanDtype;
}

/**
 * A chained scan on the WebAssembly kernels, one task per thread claiming units in order: each
 * unit is summed, its carry chained from the unit before it through `carries` (the inclusive
 * total after unit u, f64, published by setting `published[u]`), then scanned in place and copied
 * into `out` (undefined: the caller reads the module memory itself).
 * The input is either in a shared module memory (`memory`, element 0 at byte `at`) or `input`,
 * which each worker copies unit by unit into its own instance's memory.
 */
export interface ScanChainTask extends ClaimedUnits {
  readonly kind: 'scanChain';
  readonly dtype: ScanDtype;
  readonly exclusive: boolean;
  readonly initial: number;
  readonly carries: SharedArrayBuffer;
  readonly published: SharedArrayBuffer;
  readonly source: { readonly memory: ModuleMemory; readonly at: number } | { readonly input: Ref };
  readonly out: Ref | undefined;
}

/**
 * A grid problem without its arrays, which travel in one shared Float64Array: the axes one after
 * the other (lengths `counts`), then the coefficients (m·d), the targets (m), the tolerances (m).
 */
export interface SharedGridProblem {
  /** Unique per call: the worker rebuilds the problem once per call, not once per task. */
  readonly id: number;
  readonly meta: Omit<GridSearchProblem, 'axes' | 'coefficients' | 'targets' | 'tolerances'>;
  readonly data: Ref;
}

/** Which range kernel a grid task runs: the pruned search on the WebAssembly SIMD kernels or in JavaScript, or the brute force. */
export type GridKernel = 'wasm-simd' | 'pruned' | 'naive';

/**
 * A grid search in ranges of prefixes (linear indices over the first `outer` dimensions, x1
 * slowest) that the tasks claim (`bounds` are prefix indices). `tally` holds the `GRID_*` words.
 */
export interface GridTask extends ClaimedUnits {
  readonly kind: 'grid';
  readonly problem: SharedGridProblem;
  readonly kernel: GridKernel;
  readonly outer: number;
  readonly tally: SharedArrayBuffer;
}

// Words of a grid call's tally (an Int32Array over `GridTask.tally`).
/** Points found so far by all tasks, saturating at maxPoints + 1: past maxPoints every task stops. */
export const GRID_FOUND = 0;
/** Ranges finished (the main thread reports progress from it). */
export const GRID_DONE = 1;
export const GRID_WORDS = 2;

/**
 * A grid task's answer: `exceeded`, or its ranges' points in one Float64Array: the count k of
 * ranges it ran, then k pairs (range index, points found), then the points of those ranges in
 * that order, d values each.
 */
export type GridTaskResult = Float64Array | { readonly exceeded: true };

export interface PingTask {
  readonly kind: 'ping';
}

/** What the production worker (src/worker.ts) runs; the test-only tasks are in src/testing-protocol.ts. */
export type Task = Conv2dTask | ConvLayerTask | Conv2dModuleTask | ConvLayerModuleTask | StencilStepTask | StencilSlabTask | ScanSumTask | ScanLocalTask | ScanChainTask | GridTask | PingTask;
