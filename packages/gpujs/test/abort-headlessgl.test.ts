import { describe, it } from 'vitest';
import { describeAbortLatency } from '@kernelkit/ops/testing';
import { createGpujsBackend } from '../src/index.js';
import { headlessglSkipReason } from './xvfb.js';

// headless-gl needs an X server (see xvfb.ts); its kernel calls block this thread like the CPU
// modes', so an abort waits for the current call. Its own file: Dawn and headless-gl cannot
// share a process here (see dispose.test.ts).
const skip = await headlessglSkipReason();

describe('gpujs/headlessgl: abort latency', () => {
  if (skip !== undefined) it.skip(`skipped: ${skip}`, () => {});
  else describeAbortLatency('gpujs/headlessgl', () => createGpujsBackend({ mode: 'headlessgl' }), { timeoutMs: 180_000 });
});
