import type { ConvLayerProblem } from './types.js';

export const convLayerOutputLength = (p: Pick<ConvLayerProblem, 'batch' | 'maps' | 'outHeight' | 'outWidth'>): number =>
  p.batch * p.maps * p.outHeight * p.outWidth;

/** 2 flops per multiply-add; the seeds' GFLOP/s. */
export const convLayerFlops = (p: Pick<ConvLayerProblem, 'batch' | 'maps' | 'outHeight' | 'outWidth' | 'channels' | 'k'>): number =>
  2 * convLayerOutputLength(p) * p.channels * p.k * p.k;
