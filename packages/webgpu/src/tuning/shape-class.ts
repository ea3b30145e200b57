import type { Conv2dProblem } from '@kernelkit/ops';

/** ⌊log2 n⌋ for n ≥ 1: sizes within a factor of two share a bucket. */
export function log2Bucket(n: number): number {
  if (!(Number.isFinite(n) && n >= 1)) return 0;
  return Math.floor(Math.log2(n));
}

/**
 * What decides which conv2d config wins, coarsely enough that a handful of sweeps cover a
 * workload: K (reuse per input pixel, halo size), the width bucket (how many workgroups span a
 * row, how much of the last one is wasted), the total-pixel bucket (how many waves fill the
 * GPU) and whether it is a single image (a batch adds a third grid dimension to fill it).
 */
export interface Conv2dShapeClass {
  readonly k: number;
  readonly widthLog2: number;
  readonly pixelsLog2: number;
  readonly single: boolean;
}

export function conv2dShapeClass(p: Pick<Conv2dProblem, 'batch' | 'height' | 'width' | 'k'>): Conv2dShapeClass {
  return { k: p.k, widthLog2: log2Bucket(p.width), pixelsLog2: log2Bucket(p.batch * p.height * p.width), single: p.batch === 1 };
}

/** The tuner key, e.g. `conv2d k=5 w=2^13 px=2^26 batch=1`. */
export function conv2dShapeKey(c: Conv2dShapeClass): string {
  return `conv2d k=${c.k} w=2^${c.widthLog2} px=2^${c.pixelsLog2} batch${c.single ? '=1' : '>1'}`;
}
