import { describe, it } from 'vitest';
import { describeConformance, propertyRunsFromEnv } from '@kernelkit/ops/testing';
import { createGpujsBackend } from '../src/index.js';
import { oversizeRows } from './oversize.js';
import { headlessglSkipReason } from './xvfb.js';

// headless-gl needs an X server: start our own Xvfb (CI does not wrap `npm test` in xvfb-run).
// GL on Mesa llvmpipe is slow to compile shaders, so: reduced sizes, fewer property runs.
const skip = await headlessglSkipReason();

if (skip !== undefined) {
  describe('gpujs/headlessgl: conformance', () => it.skip(`skipped: ${skip}`, () => {}));
} else {
  await describeConformance('gpujs/headlessgl', () => createGpujsBackend({ mode: 'headlessgl' }), {
    scale: 'reduced',
    propertyRuns: 25,
    // `npm run fuzz` (KERNELKIT_FC_RUNS=2000) takes minutes per property here: up to 1 s a run.
    timeoutMs: Math.max(300_000, 1_000 * (propertyRunsFromEnv() ?? 0)),
    oversize: oversizeRows(2 ** 22),
  });
}
