import { randomF32 } from '../common/random.js';
import type { Conv2dArgs } from './types.js';

export interface Conv2dWorkload {
  readonly id: string;
  readonly label: string;
  readonly batch: number;
  readonly height: number;
  readonly width: number;
  readonly k: number;
}

/** A small set that fits a 2-core CI machine, and the course reports' sizes (reports 000 and 002). */
export const CONV2D_WORKLOADS = {
  small: [
    { id: 'conv2d-4x512-k11', label: '4×512² K=11', batch: 4, height: 512, width: 512, k: 11 },
    { id: 'conv2d-1x1024-k5', label: '1024² K=5', batch: 1, height: 1024, width: 1024, k: 5 },
  ],
  /** The sizes of the course reports the project grew from (the bench's `--workload seed`). */
  seed: [
    { id: 'conv2d-16x2048-k11', label: '16×2048² K=11', batch: 16, height: 2048, width: 2048, k: 11 },
    { id: 'conv2d-1x8192-k5', label: '8192² K=5', batch: 1, height: 8192, width: 8192, k: 5 },
  ],
} as const satisfies Record<string, readonly Conv2dWorkload[]>;

export function makeConv2dArgs(w: Omit<Conv2dWorkload, 'id' | 'label'>, seed = 1): Conv2dArgs {
  return {
    input: randomF32(w.batch * w.height * w.width, seed),
    filter: randomF32(w.k * w.k, seed + 1),
    batch: w.batch,
    height: w.height,
    width: w.width,
    k: w.k,
  };
}
