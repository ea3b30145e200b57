import { fileURLToPath } from 'node:url';
import type { GridDim, GridSearchArgs } from './types.js';

/** The real CS610 files, shipped with this package. */
export const CS610_GRID_PATH = fileURLToPath(new URL('../../data/cs610-grid-search/grid.txt', import.meta.url));
export const CS610_DISP_PATH = fileURLToPath(new URL('../../data/cs610-grid-search/disp.txt', import.meta.url));

export interface GridSearchWorkload {
  readonly id: string;
  readonly label: string;
  /** Points per dimension (13 is the full CS610 grid). */
  readonly stepsPerDim: number;
}

export const GRID_SEARCH_WORKLOADS = {
  small: [{ id: 'grid-cs610-6', label: 'CS610, 6 steps/dim (6^10 ≈ 6.0e7 pts)', stepsPerDim: 6 }],
  /** The sizes of the course reports the project grew from (the bench's `--workload seed`). */
  seed: [
    { id: 'grid-cs610-8', label: 'CS610, 8 steps/dim (8^10 ≈ 1.07e9 pts)', stepsPerDim: 8 },
    { id: 'grid-cs610-full', label: 'CS610 full (13^10 ≈ 1.38e11 pts)', stepsPerDim: 13 },
  ],
} as const satisfies Record<string, readonly GridSearchWorkload[]>;

/** Dimensions of the CS610 problem. */
export const CS610_DIMS = 10;

/** Grid points of the CS610 problem cut to `stepsPerDim` points per axis (the work of the bench's points/s). */
export const cs610Points = (stepsPerDim: number): number => stepsPerDim ** CS610_DIMS;

/** The CS610 problem with each axis cut to its first `stepsPerDim` points (same lower and step). */
export function reduceGrid(args: GridSearchArgs, stepsPerDim: number): GridSearchArgs {
  const dims: GridDim[] = args.dims.map((g) => ({ lower: g.lower, step: g.step, upper: g.lower + (stepsPerDim + 0.5) * g.step }));
  return { ...args, dims };
}
