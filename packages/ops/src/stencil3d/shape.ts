import type { Stencil3dProblem } from './types.js';

export const stencil3dOutputLength = (p: Pick<Stencil3dProblem, 'nx' | 'ny' | 'nz'>): number => p.nx * p.ny * p.nz;

/** Grid-point updates (cells × steps): the course reports give GPts/s from this. */
export const stencil3dPointUpdates = (p: Pick<Stencil3dProblem, 'nx' | 'ny' | 'nz' | 'steps'>): number =>
  p.nx * p.ny * p.nz * p.steps;

export const STENCIL_DEFAULTS = {
  zero: { c0: 0, c1: 0.8 },
  copy: { c0: 1 / 7, c1: 1 / 7 },
} as const;
