/**
 * The testing worker: the failure paths `@kernelkit/piscina/testing` drives (a task that throws,
 * a thread that exits, an op task failing mid-op). Piscina loads it in the pool's threads, beside
 * the production worker, only for tasks submitted with its file name.
 */
import { stencilSlab } from './worker.js';
import { FAULT_EXIT_CODE, FAULT_MESSAGE, TEST_EXIT_CODE, type FaultAction, type TestingWorkerTask } from './testing-protocol.js';

/** Fails as a bug would, or ends the thread as a crash would. */
function fail(action: FaultAction): never {
  if (action === 'exit') process.exit(FAULT_EXIT_CODE);
  throw new Error(FAULT_MESSAGE);
}

export default function runTesting(t: TestingWorkerTask): unknown {
  if (t.kind === 'test') {
    if (t.action === 'throw') throw new TypeError('kernelkit testing hook: deliberate worker failure');
    if (t.action === 'exit') process.exit(TEST_EXIT_CODE);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, t.ms ?? 0);
    return 'slept';
  }
  const task = t.task;
  if (task.kind !== 'stencilSlab') fail(t.action);
  // Mid-run: after the first step, so the other participants are at (or past) a barrier.
  const failAt = Math.min(1, task.steps - 1);
  stencilSlab(task, (step) => {
    if (step === failAt) fail(t.action);
  });
  return undefined;
}
