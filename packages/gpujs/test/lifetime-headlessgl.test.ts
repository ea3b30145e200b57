import { afterAll, describe, it } from 'vitest';
import { describeLifetimeCycles } from '@kernelkit/ops/testing';
import { createGpujsBackend, probeGpujsModes } from '../src/index.js';
import { startXvfb } from './xvfb.js';

// headless-gl: every instance makes a GL context and compiles its kernels' shaders on Mesa
// llvmpipe: 1000 cycles took 270 s on the 2-core dev machine (RSS 213 → 231 MiB).
const xvfb = await startXvfb();
const probe = typeof xvfb === 'string' ? undefined : (await probeGpujsModes()).headlessgl;
const skip = typeof xvfb === 'string' ? xvfb : probe?.available === true ? undefined : probe?.reason;
if (typeof xvfb !== 'string') afterAll(() => xvfb.stop());
if (skip !== undefined) {
  describe('gpujs/headlessgl: lifetime', () => it.skip(`skipped: ${skip}`, () => {}));
} else {
  describeLifetimeCycles('gpujs/headlessgl', () => createGpujsBackend({ mode: 'headlessgl' }), { timeoutMs: 900_000 });
}
