import { createRequire } from 'node:module';
import type { GpujsMode } from '@kernelkit/ops';

/**
 * gpu.js is CommonJS; its bundled typings do not cover 2.24's webasm/webgpu classes or
 * `createPipeline` introspection, so this file is the one place that describes the slice of
 * its API the backend uses. Everything else imports from here.
 */
const require = createRequire(import.meta.url);

export type { GpujsMode };
export const GPUJS_MODES: readonly GpujsMode[] = ['webgpu', 'headlessgl', 'webasm', 'cpu'];

export interface KernelSettings {
  readonly output: readonly number[];
  readonly constants?: Readonly<Record<string, number>>;
  readonly dynamicArguments?: boolean;
  readonly loopMaxIterations?: number;
  readonly tactic?: 'precision';
  readonly precision?: 'single';
}

/** What `gpu.createKernel` returns: callable, with the built kernel on `.kernel`. */
export interface KernelRun {
  (...args: unknown[]): unknown;
  readonly kernel?: object;
  readonly fallbackReason?: string | null;
  destroy(removeCanvasReferences?: boolean): void;
}

export interface PipelineRun {
  (...args: unknown[]): Promise<unknown>;
  readonly executorKind?: string;
  readonly backend?: string;
  readonly fallbackReason?: string | null;
  /** Settles once the pipeline's in-flight runs have ended and its plan is released. */
  destroy(): Promise<void> | void;
}

export interface GpuInstance {
  readonly mode: string;
  readonly Kernel: { readonly name: string };
  createKernel(fn: (...args: never[]) => number, settings: KernelSettings): KernelRun;
  createPipeline(fn: (...args: never[]) => unknown, settings?: { readonly constants?: Readonly<Record<string, number>> }): PipelineRun;
  /**
   * Destroys every kernel and pipeline this instance made, on a timer (GL contexts miss their
   * lose-context event when made and destroyed in one turn); the promise settles when that is done.
   */
  destroy(): Promise<void>;
}

interface GpujsModule {
  GPU: new (settings: { mode: string }) => GpuInstance;
  CPUKernel: abstract new () => object;
  HeadlessGLKernel: (abstract new () => object) & { readonly isSupported: boolean };
  WebAssemblyKernel: (abstract new () => object) & { readonly isSupported: boolean };
  WebGPUKernel: abstract new () => object;
  WebGPUContext: { destroy(): Promise<void> };
  /** Wraps a flat typed array so kernels index it with the given [x, y, z] size. */
  input(value: Float32Array, size: readonly number[]): object;
}

export const gpujs = require('gpu.js') as GpujsModule;

/** The mode of a built kernel instance, from its class (never from what we asked for). */
export function kernelMode(kernel: object | undefined): string {
  if (kernel === undefined) return 'unbuilt';
  if (kernel instanceof gpujs.WebGPUKernel) return 'webgpu';
  if (kernel instanceof gpujs.HeadlessGLKernel) return 'headlessgl';
  if (kernel instanceof gpujs.WebAssemblyKernel) return 'webasm';
  if (kernel instanceof gpujs.CPUKernel) return 'cpu';
  return kernel.constructor.name;
}
