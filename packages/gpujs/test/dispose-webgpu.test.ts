import { describe, it } from 'vitest';
import { probeGpujsModes } from '../src/index.js';
import { expectNothingPendingAfterDispose } from './dispose-check.js';

// Its own file: see dispose.test.ts. Here Dawn's OpenGL ES software adapter (llvmpipe). ~1 s.
const probe = (await probeGpujsModes()).webgpu;

describe('gpujs/webgpu: dispose() resolves only once gpu.js has freed its kernels', () => {
  if (!probe.available) it.skip(`skipped: ${probe.reason ?? 'unavailable'}`, () => {});
  else it("no timer of gpu.js's is pending once dispose() resolves", () => expectNothingPendingAfterDispose('webgpu'));
});
