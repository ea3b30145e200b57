import {
  CONV2D_WORKLOADS, CONV_LAYER_WORKLOADS, CS610_DISP_PATH, CS610_GRID_PATH, GRID_SEARCH_WORKLOADS, SCAN_WORKLOADS, STENCIL3D_WORKLOADS,
  conv2dPixels, convLayerFlops, convLayerOutputShape, cs610Points, makeConv2dArgs, makeConvLayerArgs, makeScanArgs, makeStencil3dArgs, readCs610Problem, reduceGrid, scanBytes, stencil3dPointUpdates,
  type OpArgs, type OpName,
} from '@kernelkit/ops';
import type { WorkloadName } from './types.js';

export interface BenchCase<O extends OpName = OpName> {
  readonly op: O;
  readonly id: string;
  readonly label: string;
  /** Elements (or grid points / 50) the backend caps compare against. */
  readonly size: number;
  /** Work per run in the course reports' unit (MPix, GB, GFLOP, …), before dividing by seconds. */
  readonly work: number;
  readonly unit: string;
  make(): Promise<OpArgs<O>>;
}

/** Smoke-test sizes (tests, CI): every op in well under a second. */
const TINY = {
  conv2d: [{ id: 'conv2d-1x64-k5', label: '64² K=5', batch: 1, height: 64, width: 64, k: 5 }],
  stencil3d: [{ id: 'stencil-16-s2', label: 'N=16, 2 steps', n: 16, steps: 2, boundary: 'copy' as const }],
  scan: [
    { id: 'scan-10k-u32', label: '10k u32', n: 10_000, dtype: 'u32' as const },
    { id: 'scan-10k-f32', label: '10k f32', n: 10_000, dtype: 'f32' as const },
  ],
  gridSearch: [{ id: 'grid-cs610-4', label: 'CS610, 4 steps/dim', stepsPerDim: 4 }],
  convLayer: [{ id: 'convlayer-L2-b2', label: 'L2 C4 M16 40² K7, B=2', batch: 2, channels: 4, height: 40, width: 40, maps: 16, k: 7 }],
};

function pick<T>(w: WorkloadName, small: readonly T[], courseSizes: readonly T[], tiny: readonly T[]): readonly T[] {
  return w === 'small' ? small : w === 'seed' ? courseSizes : tiny;
}

export function benchCases(w: WorkloadName): BenchCase[] {
  const out: BenchCase[] = [];
  for (const c of pick(w, CONV2D_WORKLOADS.small, CONV2D_WORKLOADS.seed, TINY.conv2d)) {
    out.push({ op: 'conv2d', id: c.id, label: c.label, size: c.batch * c.height * c.width, work: conv2dPixels(c) / 1e6, unit: 'MPix/s', make: async () => makeConv2dArgs(c) });
  }
  for (const c of pick(w, STENCIL3D_WORKLOADS.small, STENCIL3D_WORKLOADS.seed, TINY.stencil3d)) {
    const pu = stencil3dPointUpdates({ nx: c.n, ny: c.n, nz: c.n, steps: c.steps });
    out.push({ op: 'stencil3d', id: c.id, label: c.label, size: c.n ** 3, work: pu / 1e9, unit: 'GPts/s', make: async () => makeStencil3dArgs(c) });
  }
  for (const c of pick(w, SCAN_WORKLOADS.small, SCAN_WORKLOADS.seed, TINY.scan)) {
    // scanBytes counts a read and a write of every element (2·bytes), as the course reports' GB/s does.
    out.push({ op: 'scan', id: c.id, label: c.label, size: c.n, work: scanBytes(c.n, c.dtype) / 1e9, unit: 'GB/s', make: async () => makeScanArgs(c) });
  }
  for (const c of pick(w, GRID_SEARCH_WORKLOADS.small, GRID_SEARCH_WORKLOADS.seed, TINY.gridSearch)) {
    const points = cs610Points(c.stepsPerDim);
    out.push({
      op: 'gridSearch', id: c.id, label: c.label, size: points / 50, work: points, unit: 'points/s',
      make: async () => reduceGrid(await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH), c.stepsPerDim),
    });
  }
  for (const c of pick(w, CONV_LAYER_WORKLOADS.small, CONV_LAYER_WORKLOADS.seed, TINY.convLayer)) {
    const flops = convLayerFlops({ ...c, ...convLayerOutputShape(c) });
    out.push({ op: 'convLayer', id: c.id, label: c.label, size: c.batch * c.channels * c.height * c.width, work: flops / 1e9, unit: 'GFLOP/s', make: async () => makeConvLayerArgs(c) });
  }
  return out;
}

