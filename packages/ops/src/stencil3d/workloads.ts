import { randomF32, randomF64 } from '../common/random.js';
import type { Stencil3dArgs, StencilBoundary } from './types.js';

export interface Stencil3dWorkload {
  readonly id: string;
  readonly label: string;
  readonly n: number;
  readonly steps: number;
  readonly boundary: StencilBoundary;
}

/**
 * A small set, and the grid sizes of course report 003. Multi-step runs use the `'copy'` (heat equation) policy: with the A4
 * coefficients (c1 = 0.8, six neighbours) values grow 4.8× per step and overflow f32 long
 * before 100 steps, which would make the timing rows meaningless.
 */
export const STENCIL3D_WORKLOADS = {
  small: [
    { id: 'stencil-64-s100', label: 'N=64, 100 steps', n: 64, steps: 100, boundary: 'copy' },
    { id: 'stencil-128-s10', label: 'N=128, 10 steps', n: 128, steps: 10, boundary: 'copy' },
  ],
  /** The sizes of the course reports the project grew from (the bench's `--workload seed`). */
  seed: [
    { id: 'stencil-64-s100', label: 'N=64, 100 steps', n: 64, steps: 100, boundary: 'copy' },
    { id: 'stencil-256-s10', label: 'N=256, 10 steps', n: 256, steps: 10, boundary: 'copy' },
    { id: 'stencil-512-s10', label: 'N=512, 10 steps', n: 512, steps: 10, boundary: 'copy' },
  ],
} as const satisfies Record<string, readonly Stencil3dWorkload[]>;

export function makeStencil3dArgs(w: Omit<Stencil3dWorkload, 'id' | 'label'>, seed = 1, dtype: 'f32' | 'f64' = 'f32'): Stencil3dArgs {
  const len = w.n * w.n * w.n;
  return {
    input: dtype === 'f32' ? randomF32(len, seed) : randomF64(len, seed),
    nx: w.n,
    steps: w.steps,
    boundary: w.boundary,
  };
}
