import type { Task } from './protocol.js';

/**
 * Messages of the testing worker (src/testing-worker.ts), which the pool's threads load only for
 * tasks that `@kernelkit/piscina/testing` submits with it: the production worker has no task
 * that fails on purpose or ends its thread.
 */

/**
 * The testing worker, built. Resolved relative to the package root like the pool's WORKER_URL,
 * so it is `dist/testing-worker.js` from `src/` and from `dist/`.
 */
export const TESTING_WORKER_URL = new URL('../dist/testing-worker.js', import.meta.url);

/** `'throw'` throws a TypeError in the worker, `'exit'` ends its thread with TEST_EXIT_CODE, `'sleep'` blocks it for `ms`. */
export interface TestTask {
  readonly kind: 'test';
  readonly action: 'throw' | 'exit' | 'sleep';
  readonly ms?: number;
}

/** Exit code of a worker that a `'test'` task with action `'exit'` ends. */
export const TEST_EXIT_CODE = 70;

/** What an injected fault does to the op task that carries it (see `injectFault` in src/testing.ts). */
export type FaultAction = 'throw' | 'exit';

/** An op task that fails: on arrival, or for a stencil participant after its first step, with the others waiting at the barrier. */
export interface FaultTask {
  readonly kind: 'fault';
  readonly action: FaultAction;
  readonly task: Task;
}

/** Message of the error an injected `'throw'` fault raises in the worker. */
export const FAULT_MESSAGE = 'kernelkit testing hook: injected fault';

/** Exit code of a worker that an injected `'exit'` fault ends. */
export const FAULT_EXIT_CODE = 71;

export type TestingWorkerTask = TestTask | FaultTask;
