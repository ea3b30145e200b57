import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyResult, type Backend } from '@kernelkit/ops';
import { stencilCase } from '@kernelkit/ops/testing';
import { createGpujsBackend } from '../src/index.js';
import { STEPS_PER_PIPELINE } from '../src/ops/stencil3d.js';

for (const mode of ['webasm', 'cpu'] as const) {
  describe(`gpujs/${mode}: pipelines and the kernel cache`, () => {
    let backend: Backend;
    beforeAll(async () => {
      backend = await createGpujsBackend({ mode });
    });
    afterAll(() => backend.dispose());

    it('stencil3d with tens of thousands of steps: memory does not grow with the step count', async () => {
      const args = stencilCase([3, 3, 3, 0, 'copy'], 5);
      const steps = 40_000;
      const before = process.memoryUsage().rss;
      const res = await backend.stencil3d({ ...args, steps });
      const grown = process.memoryUsage().rss - before;
      expect(verifyResult('stencil3d', { ...args, steps }, res.data)).toBeUndefined();
      // A plan per step grew by ~30 KiB a step (900 MiB at 30 000) before the process died.
      expect(grown).toBeLessThan(256 * 2 ** 20);
    });

    it('a step count that is not a multiple of the pipeline length gives the reference result', async () => {
      const args = stencilCase([5, 4, 3, 2 * STEPS_PER_PIPELINE + 7, 'copy'], 6);
      expect(verifyResult('stencil3d', args, (await backend.stencil3d(args)).data)).toBeUndefined();
    });

    it('more concurrent stencil3d calls of different shapes than the caches hold all succeed', async () => {
      const cases = Array.from({ length: 20 }, (_, i) => stencilCase([3 + (i % 7), 3 + (i % 5), 4 + (i % 3), 1 + (i % 4), i % 2 === 0 ? 'zero' : 'copy'], i));
      const settled = await Promise.allSettled(cases.map((c) => backend.stencil3d(c)));
      settled.forEach((s, i) => {
        if (s.status === 'rejected') expect.fail(`call ${i} rejected: ${String(s.reason)}`);
        else expect(verifyResult('stencil3d', cases[i]!, s.value.data), `call ${i}`).toBeUndefined();
      });
    });
  });
}
