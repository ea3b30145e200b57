import { describe, it } from 'vitest';
import { describeLifetimeCycles } from '@kernelkit/ops/testing';
import { createGpujsBackend } from '../src/index.js';
import { headlessglSkipReason } from './xvfb.js';

// headless-gl: every instance makes a GL context and compiles its kernels' shaders on Mesa
// llvmpipe: 1000 cycles took 270 s on the 2-core dev machine (RSS 213 → 231 MiB).
const skip = await headlessglSkipReason();
if (skip !== undefined) {
  describe('gpujs/headlessgl: lifetime', () => it.skip(`skipped: ${skip}`, () => {}));
} else {
  describeLifetimeCycles('gpujs/headlessgl', () => createGpujsBackend({ mode: 'headlessgl' }), { timeoutMs: 900_000 });
}
