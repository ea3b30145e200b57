import { conv2dFlops, convLayerFlops, convLayerOutputShape, cs610Points } from '@kernelkit/ops';

/** Fixed per-thread work of each probe in ceilings.ts (weak scaling: every thread does this much). */
export const PROBE_NAMES = ['alu', 'stream', 'conv2d', 'convLayer', 'gridSearch'] as const;
export type ProbeName = (typeof PROBE_NAMES)[number];

export const ALU_ITERATIONS = 30_000_000;
/** 32 Mi floats = 128 MiB per array, 256 MiB per thread: 4 GiB over 16 threads, far past any cache. */
export const STREAM_ELEMENTS = 32 * 2 ** 20;
/** One image of the course reports' conv2d batch (16×2048² K=11). */
export const CONV2D_PROBE = { height: 2048, width: 2048, k: 11 } as const;
/** 200 images of the ECE408 layer 2 (C4 M16 40² K7): tens of ms on the WebAssembly SIMD kernel. */
export const CONV_LAYER_PROBE = { batch: 200, channels: 4, height: 40, width: 40, maps: 16, k: 7, ...convLayerOutputShape({ height: 40, width: 40, k: 7 }) } as const;

/** The CS610 search at this many steps per dimension: a few hundred ms of the pruned WebAssembly search on one thread. */
export const GRID_PROBE_STEPS = 7;

/** Work units per thread, for throughput columns. */
export const PROBE_WORK: Readonly<Record<ProbeName, { readonly amount: number; readonly unit: string }>> = {
  alu: { amount: (ALU_ITERATIONS * 8 * 2) / 1e9, unit: 'GFLOP' },
  stream: { amount: (2 * 2 * 4 * STREAM_ELEMENTS) / 1e9, unit: 'GB' },
  conv2d: { amount: conv2dFlops({ batch: 1, ...CONV2D_PROBE }) / 1e9, unit: 'GFLOP' },
  convLayer: { amount: convLayerFlops(CONV_LAYER_PROBE) / 1e9, unit: 'GFLOP' },
  gridSearch: { amount: cs610Points(GRID_PROBE_STEPS) / 1e9, unit: 'G grid points' },
};
