import { describe, it } from 'vitest';
import { describeConformance, propertyRunsFromEnv } from '@kernelkit/ops/testing';
import { createGpujsBackend, probeGpujsModes } from '../src/index.js';
import { oversizeRows } from './oversize.js';

// gpu.js's webgpu backend on Dawn. Here that is the OpenGL ES software adapter (llvmpipe),
// which the backend accepts only when the mode is forced (auto mode wants hardware). Shader
// compiles on llvmpipe are slow, so: reduced sizes, fewer property runs.
const probe = (await probeGpujsModes()).webgpu;
if (!probe.available) {
  describe('gpujs/webgpu: conformance', () => it.skip(`skipped: ${probe.reason ?? 'unavailable'}`, () => {}));
} else {
  await describeConformance('gpujs/webgpu', () => createGpujsBackend({ mode: 'webgpu' }), {
    scale: 'reduced',
    propertyRuns: 25,
    // `npm run fuzz` (KERNELKIT_FC_RUNS=2000) takes minutes per property here: up to 1 s a run.
    timeoutMs: Math.max(300_000, 1_000 * (propertyRunsFromEnv() ?? 0)),
    oversize: oversizeRows(2 ** 24),
  });
}
