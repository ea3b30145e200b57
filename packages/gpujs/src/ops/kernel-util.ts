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
 * Work per kernel call (multiply-adds, cell updates, point tests) for a call that can be aborted.
 * The signal is looked at only between kernel calls, and cpu, webasm and GL calls also block this
 * thread, so one call must stay within a few ms in every mode: of the slower CPU kernel on
 * software runtimes (the CPU modes, GL or Dawn on Mesa llvmpipe), of a slow GPU on hardware
 * adapters. Calls without a signal keep the largest calls the mode allows.
 */
export function callWork(rt: Runtime, signal: AbortSignal | undefined): number {
  if (signal === undefined) return Infinity;
  return rt.software ? 2 ** 21 : 2 ** 26;
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
