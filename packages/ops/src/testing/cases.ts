import type { Conv2dArgs } from '../conv2d/types.js';
import type { ConvLayerArgs } from '../conv-layer/types.js';
import type { GridSearchArgs } from '../grid-search/types.js';
import type { ScanArgs, ScanArray, ScanDtype } from '../scan/types.js';
import type { Stencil3dArgs, StencilBoundary } from '../stencil3d/types.js';
import { randomF32, randomF64, randomI32, randomU32, Rng } from '../common/random.js';

/**
 * Sizes sit on and around tile and workgroup boundaries (1, 2, 31–33, 255–257), include
 * non-square shapes, K = 1 and K larger than the image. `reduced` drops the largest, for
 * software GPU adapters.
 */
export type CaseScale = 'full' | 'reduced';

export const CONV2D_CASES: readonly (readonly [b: number, h: number, w: number, k: number])[] = [
  [1, 1, 1, 1],
  [1, 1, 1, 3],
  [1, 2, 2, 3],
  [2, 3, 5, 1],
  [1, 7, 5, 11],
  [1, 31, 33, 3],
  [1, 32, 32, 5],
  [2, 33, 31, 7],
  [1, 64, 96, 9],
  [3, 17, 130, 5],
  [1, 255, 257, 3],
  [1, 257, 255, 11],
];

export function conv2dCase([batch, height, width, k]: readonly [number, number, number, number], seed: number): Conv2dArgs {
  return { input: randomF32(batch * height * width, seed), filter: randomF32(k * k, seed + 7), batch, height, width, k };
}

export const STENCIL_CASES: readonly (readonly [nx: number, ny: number, nz: number, steps: number, boundary: StencilBoundary])[] = [
  [1, 1, 1, 1, 'zero'],
  [2, 2, 2, 1, 'copy'],
  [3, 3, 3, 1, 'zero'],
  [3, 3, 3, 2, 'copy'],
  [5, 5, 5, 0, 'zero'],
  [4, 5, 6, 3, 'copy'],
  [17, 5, 9, 2, 'zero'],
  [31, 32, 33, 2, 'copy'],
  [33, 33, 33, 1, 'zero'],
  [32, 32, 32, 5, 'copy'],
  [66, 34, 18, 3, 'zero'],
  [64, 64, 64, 4, 'copy'],
];

export function stencilCase([nx, ny, nz, steps, boundary]: readonly [number, number, number, number, StencilBoundary], seed: number, dtype: 'f32' | 'f64' = 'f32'): Stencil3dArgs {
  const n = nx * ny * nz;
  return { input: dtype === 'f32' ? randomF32(n, seed) : randomF64(n, seed), nx, ny, nz, steps, boundary };
}

export const SCAN_LENGTHS: readonly number[] = [0, 1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 65535, 65536, 65537, 1_000_003];

export function scanInput(dtype: ScanDtype, n: number, seed: number): ScanArray {
  switch (dtype) {
    case 'u32':
      return randomU32(n, seed);
    case 'i32':
      return randomI32(n, seed);
    case 'f32':
      return randomF32(n, seed);
    case 'f64':
      return randomF64(n, seed);
  }
}

export function scanCase(dtype: ScanDtype, n: number, seed: number, exclusive = false, initial = 0): ScanArgs {
  return { input: scanInput(dtype, n, seed), exclusive, initial };
}

export const CONV_LAYER_CASES: readonly (readonly [b: number, c: number, h: number, w: number, m: number, k: number])[] = [
  [1, 1, 1, 1, 1, 1],
  [2, 3, 5, 7, 4, 3],
  [1, 1, 7, 7, 1, 7],
  [3, 2, 33, 31, 5, 2],
  [1, 2, 9, 9, 3, 1],
  [2, 4, 40, 40, 16, 7],
  [1, 1, 86, 86, 4, 7],
  [1, 3, 34, 18, 33, 5],
];

export function convLayerCase([batch, channels, height, width, maps, k]: readonly [number, number, number, number, number, number], seed: number, extras: { bias?: boolean; relu?: boolean } = {}): ConvLayerArgs {
  return {
    input: randomF32(batch * channels * height * width, seed),
    weights: randomF32(maps * channels * k * k, seed + 3),
    batch,
    channels,
    height,
    width,
    maps,
    k,
    ...(extras.bias ? { bias: randomF32(maps, seed + 5) } : {}),
    ...(extras.relu ? { relu: true } : {}),
  };
}

/**
 * Grid problems that put many points exactly on a bound (dyadic values, sums exactly d ± e)
 * or within a rounding error of it (step 0.1): the f32 screens of the GPU backends must
 * re-check these in f64 to agree with the reference.
 */
export const GRID_CASES: readonly { readonly name: string; readonly args: GridSearchArgs }[] = [
  {
    name: 'exact ties on both bounds (dyadic)',
    args: {
      dims: [
        { lower: 0, upper: 10, step: 0.25 },
        { lower: -2, upper: 3, step: 0.5 },
        { lower: 1, upper: 4, step: 0.125 },
      ],
      coefficients: [1, 1, 1, 0.5, -2, 1],
      targets: [6, 1],
      tolerances: [1.5, 2.25],
    },
  },
  {
    name: 'inexact step 0.1 (rounding decides membership)',
    args: {
      dims: [
        { lower: 0, upper: 3, step: 0.1 },
        { lower: 0.3, upper: 2.1, step: 0.1 },
        { lower: -1, upper: 1, step: 0.1 },
      ],
      coefficients: [1, 1, 1, 0.3, 0.7, -1.1],
      targets: [1.5, 0.9],
      tolerances: [0.3, 0.6],
    },
  },
  {
    name: 'no constraints: every point passes',
    args: { dims: [{ lower: 0, upper: 3, step: 1 }, { lower: 1, upper: 2, step: 0.5 }], coefficients: [], targets: [], tolerances: [] },
  },
  {
    name: 'empty axis (upper − lower < step)',
    args: { dims: [{ lower: 0, upper: 3, step: 1 }, { lower: 1, upper: 1.2, step: 0.5 }], coefficients: [1, 1], targets: [1], tolerances: [5] },
  },
  {
    name: 'one dimension',
    args: { dims: [{ lower: -5, upper: 5, step: 0.5 }], coefficients: [3], targets: [1.5], tolerances: [4.5] },
  },
  {
    name: 'zero tolerance',
    args: { dims: [{ lower: 0, upper: 8, step: 1 }, { lower: 0, upper: 8, step: 1 }], coefficients: [1, 2], targets: [6], tolerances: [0] },
  },
];

/** A random small grid problem with a decent hit rate, for property tests. */
export function randomGridCase(seed: number): GridSearchArgs {
  const rng = new Rng(seed);
  const d = rng.int(1, 5);
  const m = rng.int(0, 3);
  const dims = Array.from({ length: d }, () => {
    const step = [0.25, 0.5, 1, 0.1, 0.3][rng.int(0, 4)]!;
    const lower = rng.int(-8, 8) * 0.5;
    return { lower, upper: lower + step * (rng.int(0, 7) + 0.5), step };
  });
  const coefficients = Array.from({ length: m * d }, () => rng.int(-4, 4) * 0.5);
  const targets = Array.from({ length: m }, () => rng.int(-10, 10) * 0.5);
  const tolerances = Array.from({ length: m }, () => rng.int(0, 12) * 0.25);
  return { dims, coefficients, targets, tolerances };
}
