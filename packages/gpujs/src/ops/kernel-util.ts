import { LimitExceededError } from '@kernelkit/core';
import type { Runtime } from '../runtime.js';

/** What gpu.js kernel functions see as `this` (the fields these kernels use). */
export interface KernelThis {
  readonly thread: { readonly x: number; readonly y: number; readonly z: number };
  readonly constants: Readonly<Record<string, number>>;
}

/**
 * Copies a gpu.js result into `dst` at `offset`, in x-fastest order. gpu.js returns a
 * Float32Array for 1-D outputs, an array of rows for 2-D and an array of planes of rows for 3-D.
 * Returns the number of values written.
 */
export function copyResult(res: unknown, dst: Float32Array, offset: number): number {
  if (res instanceof Float32Array) {
    dst.set(res, offset);
    return res.length;
  }
  let o = offset;
  for (const part of res as readonly unknown[]) o += copyResult(part, dst, o);
  return o - offset;
}

/** Kernel source as a function value, typed loosely: gpu.js parses it from its text. */
export type KernelFn = (...args: never[]) => number;
export const kernelFn = (f: (this: KernelThis, ...args: never[]) => number): KernelFn => f as unknown as KernelFn;

/**
 * Work per kernel call (multiply-adds, cell updates, point tests) for a call that can be aborted,
 * in the modes whose kernels run synchronously on this thread (cpu, webasm): a few ms of the
 * slower one, so the signal is looked at between calls often enough. Other calls keep the
 * largest calls the mode allows.
 */
export function callWork(rt: Runtime, signal: AbortSignal | undefined): number {
  return signal !== undefined && (rt.mode === 'cpu' || rt.mode === 'webasm') ? 2 ** 21 : Infinity;
}

/**
 * Refuses, before any work, a problem whose smallest kernel call (one row band, z-slab or image:
 * the unit an op cannot split further) needs `cells` cells in one array, above what one call of
 * this mode indexes exactly. Modes without a hard limit (cpu) compute it right and pass.
 */
export function assertCallFits(rt: Runtime, parameter: string, cells: number, unit: string): void {
  if (!rt.hardLimit || cells <= rt.maxCells) return;
  throw new LimitExceededError(
    parameter,
    `${unit}: ${cells} cells in one gpu.js ${rt.mode} kernel call, above its limit of ${rt.maxCells} (gpu.js indexes in f32 in this mode; the work cannot be split further)`,
  );
}
