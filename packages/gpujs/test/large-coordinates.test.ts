import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '@kernelkit/ops';
import { verifyResult } from '@kernelkit/ops';
import { createGpujsBackend } from '../src/index.js';

/**
 * Problems whose every kernel call fits the cell limit, but whose absolute coordinates pass 2^24:
 * gpu.js does index arithmetic in f32 outside cpu mode, so the kernels must work in coordinates
 * relative to their slice. With absolute coordinates webasm returns conv2d row 2^24 − 1 of a
 * 1-pixel-wide image as 703 for 711 and stencil3d plane 2^24 + 1 of a 1×1 column as −36 for −35.
 * Slow by nature (2^24 cells at least; gpu.js returns a 1-wide image as 2^24 one-element rows),
 * most of it the stencil.
 */
const ramp = (len: number): Float32Array => {
  const a = new Float32Array(len);
  for (let i = 0; i < len; i++) a[i] = (i % 97) - 48;
  return a;
};

describe('gpujs/webasm: coordinates past 2^24 in problems banded into calls', () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await createGpujsBackend({ mode: 'webasm' });
  });
  afterAll(() => backend.dispose());

  it('conv2d: an image 1 pixel wide and 2^24 + 64 rows tall', async () => {
    const height = 2 ** 24 + 64;
    const args = { input: ramp(height), filter: new Float32Array([1, 2, 3, 4, 5, 6, 7, 8, 9]), batch: 1, height, width: 1, k: 3 };
    expect(verifyResult('conv2d', args, (await backend.conv2d(args)).data)).toBeUndefined();
  });

  it('conv2d: one row of 2^24 pixels (the widest one call holds), 5×5 filter', async () => {
    // Columns x + (j − R) reach 2^24 + 1 here; x + j − R would round them back into the image.
    const width = 2 ** 24;
    const args = { input: ramp(width), filter: new Float32Array(25).map((_, i) => i - 12), batch: 1, height: 1, width, k: 5 };
    expect(verifyResult('conv2d', args, (await backend.conv2d(args)).data)).toBeUndefined();
  });

  it('stencil3d: a 1×1 column of 2^24 + 64 planes', async () => {
    const nz = 2 ** 24 + 64;
    const args = { input: ramp(nz), nx: 1, ny: 1, nz, steps: 1, boundary: 'copy' as const };
    expect(verifyResult('stencil3d', args, (await backend.stencil3d(args)).data)).toBeUndefined();
  });
});
