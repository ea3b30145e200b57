import { expect } from 'vitest';
import { conv2dCase } from '@kernelkit/ops/testing';
import { createGpujsBackend, type GpujsMode } from '../src/index.js';

/** Node's active timers: gpu.js's GPU#destroy() runs its teardown on one. */
const timeouts = (): number => process.getActiveResourcesInfo().filter((t) => t === 'Timeout').length;

/**
 * gpu.js's GPU#destroy() tears its kernels and pipelines down on a timer (GL contexts miss their
 * lose-context event otherwise) and resolves when done. A dispose() that does not wait for it
 * resolves with that timer pending and the kernels alive, so the count is read right after the
 * await, with no turn of the event loop in between.
 */
export async function expectNothingPendingAfterDispose(mode: GpujsMode): Promise<void> {
  const before = timeouts();
  const backend = await createGpujsBackend({ mode });
  await backend.conv2d(conv2dCase([1, 6, 5, 3], 1));
  await backend.dispose();
  expect(timeouts(), 'Node timers pending right after dispose() resolved, compared with before create').toBeLessThanOrEqual(before);
}
