import type { Conv2dProblem } from './types.js';

export const conv2dOutputLength = (p: Pick<Conv2dProblem, 'batch' | 'height' | 'width'>): number => p.batch * p.height * p.width;

/** Multiply-adds per output pixel times pixels; the course reports give MPix/s and GFLOP/s from these. */
export const conv2dPixels = (p: Pick<Conv2dProblem, 'batch' | 'height' | 'width'>): number => p.batch * p.height * p.width;
/** k² multiply-adds per output pixel (ghost cells included): the Piscina backend's work units. */
export const conv2dMultiplyAdds = (p: Pick<Conv2dProblem, 'batch' | 'height' | 'width' | 'k'>): number => p.k * p.k * conv2dPixels(p);
export const conv2dFlops = (p: Pick<Conv2dProblem, 'batch' | 'height' | 'width' | 'k'>): number => 2 * conv2dMultiplyAdds(p);
