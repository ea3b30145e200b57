import { describe } from 'vitest';
import { describeAbortLatency, describeDisposeRule } from '@kernelkit/ops/testing';
import { createGpujsBackend } from '../src/index.js';

// The modes every machine has; both run gpu.js kernels synchronously on this thread, which is
// where an abort has to wait for the current kernel call. headlessgl and webgpu modes have files
// of their own (abort-headlessgl, abort-webgpu): Dawn and headless-gl cannot share a process here.
describe('gpujs/cpu: dispose rule', () => describeDisposeRule('gpujs/cpu', () => createGpujsBackend({ mode: 'cpu' })));
for (const mode of ['cpu', 'webasm'] as const) {
  describe(`gpujs/${mode}: abort latency`, () => describeAbortLatency(`gpujs/${mode}`, () => createGpujsBackend({ mode })));
}
