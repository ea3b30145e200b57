import { describe, expect, it } from 'vitest';
import { DisposedError } from '@kernelkit/core';
import { makeStencil3dArgs } from '@kernelkit/ops';
import { createWebGpuBackend } from '../src/index.js';

describe('warmUp', () => {
  it('runs the clock spin alone (nothing on a software adapter), leaves calls correct, and refuses once disposed', async () => {
    const backend = await createWebGpuBackend({ adapter: 'any' });
    const args = makeStencil3dArgs({ n: 16, steps: 2, boundary: 'copy' });
    const before = (await backend.stencil3d(args)).data;
    await backend.warmUp!();
    expect((await backend.stencil3d(args)).data).toEqual(before);
    await backend.dispose();
    await expect(backend.warmUp!()).rejects.toBeInstanceOf(DisposedError);
  });
});
