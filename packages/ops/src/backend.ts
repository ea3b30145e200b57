import type { Timing } from '@kernelkit/core';
import type { Conv2dArgs, Conv2dProblem } from './conv2d/types.js';
import type { ConvLayerArgs, ConvLayerProblem } from './conv-layer/types.js';
import type { GridPoints, GridSearchArgs, GridSearchProblem } from './grid-search/types.js';
import type { ScanArgs, ScanArray, ScanProblem } from './scan/types.js';
import type { Stencil3dArgs, Stencil3dProblem } from './stencil3d/types.js';

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
}

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
  conv2d(args: Conv2dArgs, options?: RunOptions<Float32Array>): Promise<Result<Float32Array>>;
  stencil3d<T extends Float32Array | Float64Array>(args: Stencil3dArgs & { input: T }, options?: RunOptions<T>): Promise<Result<T>>;
  scan<T extends ScanArray>(args: ScanArgs<T>, options?: RunOptions<T>): Promise<Result<T>>;
  gridSearch(args: GridSearchArgs, options?: RunOptions<never>): Promise<Result<GridPoints>>;
  convLayer(args: ConvLayerArgs, options?: RunOptions<Float32Array>): Promise<Result<Float32Array>>;
  /** Variant names for `op`, default first. */
  variants(op: OpName): readonly string[];
  readonly disposed: boolean;
  /** Releases threads, devices and buffers. Safe to call twice. */
  dispose(): Promise<void>;
}
