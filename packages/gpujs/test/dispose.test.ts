import { afterAll, describe, it } from 'vitest';
import { probeGpujsModes } from '../src/index.js';
import { expectNothingPendingAfterDispose } from './dispose-check.js';
import { startXvfb } from './xvfb.js';

// webgpu is in dispose-webgpu.test.ts: Dawn's OpenGL ES adapter and headless-gl under Xvfb
// cannot share a process here (EGL_BAD_ACCESS one way, an X BadAccess abort the other).
// About 0.2 s of tests here.
const xvfb = await startXvfb();
if (typeof xvfb !== 'string') afterAll(() => xvfb.stop());
const probes = await probeGpujsModes();

describe('gpujs: dispose() resolves only once gpu.js has freed its kernels', () => {
  for (const mode of ['cpu', 'webasm', 'headlessgl'] as const) {
    const skip = mode === 'headlessgl' && typeof xvfb === 'string' ? xvfb : probes[mode].available ? undefined : (probes[mode].reason ?? 'unavailable');
    if (skip !== undefined) it.skip(`${mode}: skipped: ${skip}`, () => {});
    else it(`${mode}: no timer of gpu.js's is pending once dispose() resolves`, () => expectNothingPendingAfterDispose(mode));
  }
});
