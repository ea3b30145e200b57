import type { Timing } from '@kernelkit/core';
import type { Conv2dArgs, Conv2dProblem } from './conv2d/types.js';
import type { ConvLayerArgs, ConvLayerProblem } from './conv-layer/types.js';
import type { GridPoints, GridSearchArgs, GridSearchProblem } from './grid-search/types.js';
import type { ScanArgs, ScanArray, ScanProblem } from './scan/types.js';
import type { Stencil3dArgs, Stencil3dProblem } from './stencil3d/types.js';
import type { DeviceArray, DeviceData, WithDeviceInput } from './device-array.js';

export type BackendName = 'cpu' | 'piscina' | 'gpujs' | 'webgpu';
export const OP_NAMES = ['conv2d', 'stencil3d', 'scan', 'gridSearch', 'convLayer'] as const;
export type OpName = (typeof OP_NAMES)[number];

/** Argument, validated-problem and output types per op. */
export interface OpTypes {
  conv2d: { args: Conv2dArgs; problem: Conv2dProblem; data: Float32Array };
  stencil3d: { args: Stencil3dArgs; problem: Stencil3dProblem; data: Float32Array | Float64Array };
  scan: { args: ScanArgs; problem: ScanProblem; data: ScanArray };
  gridSearch: { args: GridSearchArgs; problem: GridSearchProblem; data: GridPoints };
  convLayer: { args: ConvLayerArgs; problem: ConvLayerProblem; data: Float32Array };
}
export type OpArgs<O extends OpName> = OpTypes[O]['args'];
export type OpProblem<O extends OpName> = OpTypes[O]['problem'];
export type OpData<O extends OpName> = OpTypes[O]['data'];

export interface Progress {
  /** Work done so far, in `unit`s. */
  readonly done: number;
  readonly total: number;
  readonly unit: string;
}

export interface RunOptions<D = unknown> {
  /** A name from `backend.variants(op)`; default: the backend's default variant for the op. */
  readonly variant?: string;
  /** Measure and return `timing`. */
  readonly timing?: boolean;
  /** Cancels queued or long-running work; the call rejects with `AbortError`. */
  readonly signal?: AbortSignal;
  /** Preallocated output of the right type and length; written only on success. */
  readonly out?: D;
  /** Called from long runs (grid search, big chunked jobs). */
  readonly onProgress?: (p: Progress) => void;
  /**
   * Where the result goes: `'array'` (default) a host array; `'device'` a `DeviceArray` handle
   * the caller owns and disposes, which any array input accepts (WebGPU keeps it in a GPU
   * buffer, so the next call reads it without a round trip; backends without device memory hold
   * the host array). Not with `out`; not for gridSearch.
   */
  readonly output?: OutputKind;
}

export type OutputKind = 'array' | 'device';

/** Options that ask for nothing but host output (the default when options are omitted). */
export interface ArrayOutput {
  readonly output?: 'array';
}

/**
 * A call's `Result.data` type for options of type `R`: a DeviceArray for `output: 'device'`,
 * the array for `'array'` or no `output`, either when `R` does not say.
 */
export type ResultData<R, D extends DeviceData> = R extends { readonly output: 'device' }
  ? DeviceArray<D>
  : // keyof first: an options type without `output` fails the weak-type check of the next line.
    'output' extends keyof R
    ? R extends { readonly output?: 'array' | undefined }
      ? D
      : D | DeviceArray<D>
    : D;

/** What ran and what it produced. */
export interface Result<D> {
  readonly op: OpName;
  readonly backend: BackendName;
  readonly variant: string;
  readonly data: D;
  readonly timing?: Timing;
  /** Anything worth knowing about how it ran (e.g. "f32 screen re-checked 12 points in f64"). */
  readonly notes?: readonly string[];
}

export interface AdapterInfo {
  readonly vendor: string;
  readonly architecture: string;
  readonly description: string;
  readonly software: boolean;
  readonly features: readonly string[];
  readonly limits: Readonly<Record<string, number>>;
}

export interface BackendInfo {
  readonly name: BackendName;
  /** One line: what this backend is running on. */
  readonly description: string;
  /** `true` when the compute runs on a software emulation of a GPU (e.g. llvmpipe). */
  readonly software: boolean;
  readonly threads?: number;
  readonly adapter?: AdapterInfo;
  /** gpu.js mode, etc. */
  readonly mode?: string;
  readonly capabilities: {
    /** Accepts Float64Array for stencil3d and scan. */
    readonly f64: boolean;
  };
}

/**
 * The backend contract. A backend is an object you create and dispose; nothing registers itself
 * on import. Every method validates its arguments before doing any work.
 */
export interface Backend extends AsyncDisposable {
  readonly name: BackendName;
  readonly info: BackendInfo;
  // Array inputs take the host array or a DeviceArray. A handle of this backend instance is used
  // where it lives when the op can (WebGPU convLayer and stencil3d); any other is read back to
  // a host array first, and the Result's notes say so.
  conv2d<R extends RunOptions<Float32Array> = ArrayOutput>(args: WithDeviceInput<Conv2dArgs>, options?: R): Promise<Result<ResultData<R, Float32Array>>>;
  stencil3d<T extends Float32Array | Float64Array, R extends RunOptions<T> = ArrayOutput>(
    args: Omit<Stencil3dArgs, 'input'> & { readonly input: T | DeviceArray<T> },
    options?: R,
  ): Promise<Result<ResultData<R, T>>>;
  scan<T extends ScanArray, R extends RunOptions<T> = ArrayOutput>(args: WithDeviceInput<ScanArgs<T>>, options?: R): Promise<Result<ResultData<R, T>>>;
  gridSearch(args: GridSearchArgs, options?: RunOptions<never> & ArrayOutput): Promise<Result<GridPoints>>;
  convLayer<R extends RunOptions<Float32Array> = ArrayOutput>(args: WithDeviceInput<ConvLayerArgs>, options?: R): Promise<Result<ResultData<R, Float32Array>>>;
  /** Variant names for `op`, default first. */
  variants(op: OpName): readonly string[];
  /**
   * Where present, brings the backend to the state its calls run in back to back, computing
   * nothing: a GPU idle for a while lowers its clocks, and a short call then runs at them. For
   * callers that time a few calls after other work (the router's trials, calibration).
   */
  warmUp?(): Promise<void>;
  readonly disposed: boolean;
  /**
   * Stops taking calls at once (a call made from now on rejects with `DisposedError`), lets the
   * calls already made finish (each resolves as it would have; one that asked for
   * `output: 'device'` rejects with `DisposedError`, since its handle cannot outlive the
   * backend), then releases the backend's DeviceArrays, threads, devices and buffers, and
   * resolves. To stop calls in flight rather than wait for them, abort their `signal`.
   * Calling it again returns the same promise; `[Symbol.asyncDispose]` is the same.
   */
  dispose(): Promise<void>;
}
