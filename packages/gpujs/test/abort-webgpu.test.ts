import { describe, it } from 'vitest';
import { describeAbortLatency } from '@kernelkit/ops/testing';
import { createGpujsBackend, probeGpujsModes } from '../src/index.js';

// gpu.js's webgpu mode on Dawn; here the OpenGL ES software adapter (llvmpipe). Its own file:
// Dawn and headless-gl cannot share a process here (see dispose.test.ts).
const probe = (await probeGpujsModes()).webgpu;

describe('gpujs/webgpu: abort latency', () => {
  if (!probe.available) it.skip(`skipped: ${probe.reason ?? 'unavailable'}`, () => {});
  else describeAbortLatency('gpujs/webgpu', () => createGpujsBackend({ mode: 'webgpu' }), { timeoutMs: 180_000 });
});
