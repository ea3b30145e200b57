import type { ConvLayerArgs, ConvLayerProblem } from './types.js';

/** Output height and width of a valid (unpadded) K×K correlation. */
export const convLayerOutputShape = (a: Pick<ConvLayerArgs, 'height' | 'width' | 'k'>): { outHeight: number; outWidth: number } => ({
  outHeight: a.height - a.k + 1,
  outWidth: a.width - a.k + 1,
});

export const convLayerOutputLength = (p: Pick<ConvLayerProblem, 'batch' | 'maps' | 'outHeight' | 'outWidth'>): number =>
  p.batch * p.maps * p.outHeight * p.outWidth;

/** C·K² multiply-adds per output (bias and ReLU not counted): the Piscina backend's work units. */
export const convLayerMultiplyAdds = (p: Pick<ConvLayerProblem, 'batch' | 'maps' | 'outHeight' | 'outWidth' | 'channels' | 'k'>): number =>
  convLayerOutputLength(p) * p.channels * p.k * p.k;

/** 2 flops per multiply-add; the course reports' GFLOP/s. */
export const convLayerFlops = (p: Pick<ConvLayerProblem, 'batch' | 'maps' | 'outHeight' | 'outWidth' | 'channels' | 'k'>): number => 2 * convLayerMultiplyAdds(p);
