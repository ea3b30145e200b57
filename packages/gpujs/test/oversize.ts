import { LimitExceededError } from '@kernelkit/core';
import type { OversizeCase } from '@kernelkit/ops/testing';

/**
 * Inputs one gpu.js kernel call cannot hold. The backend bands conv2d by rows, stencil3d by
 * z-planes and convLayer by images so that each call stays within the mode's cell limit
 * (src/runtime.ts MAX_CELLS: gpu.js does its index arithmetic in f32, exact below 2^24), but a
 * single row, plane or image larger than the limit cannot be split further, and every call reads
 * all of convLayer's weights: these must be refused, not computed with wrong indices (computed in
 * webasm mode, conv2d on one row of 2^24 + 16 pixels gives element 2^24 − 1 as 701 for 707, and
 * convLayer with 4097×4096 weights gives wrong maps past weight 2^24).
 * For the modes with a hard limit (webgpu, headlessgl, webasm); cpu mode computes these right.
 */
export function oversizeRows(maxCells: number): OversizeCase[] {
  const n = maxCells + 16;
  const ramp = (len: number): Float32Array => {
    const a = new Float32Array(len);
    for (let i = 0; i < len; i++) a[i] = (i % 97) - 48;
    return a;
  };
  // Weights of maps × channels just above the limit, for a 1×1 image with 1×1 kernels.
  const channels = 2 ** Math.floor(Math.log2(maxCells) / 2);
  const maps = Math.floor(maxCells / channels) + 1;
  return [
    {
      op: 'conv2d',
      what: `one image row of ${n} pixels`,
      make: () => ({ args: { input: ramp(n), filter: new Float32Array([1, 2, 3, 4, 5, 6, 7, 8, 9]), batch: 1, height: 1, width: n, k: 3 } }),
      error: LimitExceededError,
      parameter: 'input',
    },
    {
      // Each output row needs its two neighbours: 3 rows of W cells although one row fits.
      op: 'conv2d',
      what: `3 rows of ${Math.floor(maxCells / 2)} pixels (one output row with its halo is ${3 * Math.floor(maxCells / 2)} cells)`,
      make: () => {
        const w = Math.floor(maxCells / 2);
        return { args: { input: ramp(3 * w), filter: new Float32Array([1, 2, 3, 4, 5, 6, 7, 8, 9]), batch: 1, height: 3, width: w, k: 3 } };
      },
      error: LimitExceededError,
      parameter: 'input',
    },
    {
      op: 'stencil3d',
      what: `one z-plane of ${n} cells`,
      make: () => ({ args: { input: ramp(n), nx: n, ny: 1, nz: 1, steps: 1, boundary: 'copy' } }),
      error: LimitExceededError,
      parameter: 'input',
    },
    {
      op: 'convLayer',
      what: `one image of ${n} cells`,
      make: () => ({ args: { input: ramp(n), weights: new Float32Array([0.5]), batch: 1, channels: 1, height: 1, width: n, maps: 1, k: 1 } }),
      error: LimitExceededError,
      parameter: 'input',
    },
    {
      op: 'convLayer',
      what: `${maps}×${channels} weights (${maps * channels} cells) for a 1×1 image`,
      make: () => ({ args: { input: ramp(channels), weights: ramp(maps * channels), batch: 1, channels, height: 1, width: 1, maps, k: 1 } }),
      error: LimitExceededError,
      parameter: 'weights',
    },
  ];
}
