/**
 * Testing hooks: reach into a Piscina backend's pool to exercise failure paths and observe the
 * data path. Not part of the ops; exported as `@kernelkit/piscina/testing`.
 */
import { assertInteger, assertObject, assertOneOf, WorkerError, errorMessage, type ResultMemoryStats } from '@kernelkit/core';
import { OP_NAMES, type Backend, type OpName } from '@kernelkit/ops';
import { poolOf, removeSubmitHook, setSubmitHook, type CallStats, type SubmitHook } from './pool.js';
import { TESTING_WORKER_URL, type FaultAction, type FaultTask, type TestTask } from './testing-protocol.js';

export type { CallStats } from './pool.js';
export type { CallPhases } from './call.js';
export type { FaultAction } from './testing-protocol.js';
export { FAULT_EXIT_CODE, FAULT_MESSAGE, TEST_EXIT_CODE } from './testing-protocol.js';

/**
 * Runs a test-only task on one worker (in the testing worker, src/testing-worker.ts): `'throw'`
 * throws a TypeError there, `'exit'` ends the worker's thread with `process.exit(TEST_EXIT_CODE)`,
 * `'sleep'` blocks it for `ms`. Failures reject with
 * WorkerError whose `cause` is the worker's error, exactly as an op's would.
 */
export async function runWorkerTestTask(backend: Backend, action: TestTask['action'], ms?: number): Promise<unknown> {
  const pool = poolOf(backend);
  try {
    return await pool.piscina.run({ kind: 'test', action, ...(ms === undefined ? {} : { ms }) } satisfies TestTask, { filename: TESTING_WORKER_URL.href });
  } catch (err) {
    throw new WorkerError(`test task: a worker failed: ${errorMessage(err)}`, { cause: err });
  }
}

/** What the backend's last completed call did: inline or pooled, tasks, bytes copied in and out, and for pooled conv2d and convLayer calls where the time went (`phases`). */
export function lastCallStats(backend: Backend): CallStats | undefined {
  return poolOf(backend).lastStats;
}

/** What the pool's memory for results left in module memory has done: takes, reuses, collections prompted (see ResultMemory). */
export function moduleResultStats(backend: Backend): ResultMemoryStats {
  return poolOf(backend).moduleResults.stats;
}

/** Live worker threads of the backend's pool. */
export function workerCount(backend: Backend): number {
  return poolOf(backend).piscina.threads.length;
}

export interface FaultOptions {
  /** `'throw'`: the task throws an Error (FAULT_MESSAGE) in the worker; `'exit'`: the worker thread ends with `process.exit(FAULT_EXIT_CODE)`. */
  readonly action: FaultAction;
  /** Op tasks that run normally first; the next one fails. Default 0 (the next op task fails). */
  readonly afterTasks?: number;
  /** Count only the tasks of calls of this op (so that concurrent calls of other ops are never hit). */
  readonly op?: OpName;
}

export interface InjectedFault {
  /** True once a task carrying the fault has been submitted. */
  readonly fired: boolean;
  /** Removes the fault if it has not fired yet. */
  cancel(): void;
}

/**
 * Makes one op task fail inside a worker, mid-op: after `afterTasks` op tasks (of `op`, when
 * given) have been submitted to the pool, the next one is sent with the fault. A stencil
 * participant fails after its first step, while the others wait at the barrier; other tasks fail
 * on arrival. One-shot; a later `injectFault` replaces a pending one. Inline calls (below
 * `inlineBelow`) submit no tasks and are not counted.
 */
export function injectFault(backend: Backend, options: FaultOptions): InjectedFault {
  const pool = poolOf(backend);
  assertObject(options, 'options');
  assertOneOf(options.action, 'options.action', ['throw', 'exit'] as const);
  const afterTasks = options.afterTasks ?? 0;
  assertInteger(afterTasks, 'options.afterTasks', 0);
  if (options.op !== undefined) assertOneOf(options.op, 'options.op', OP_NAMES);
  let seen = 0;
  let fired = false;
  let pending = true;
  // The hook is the pool's for this fault only: replaced by a later injectFault, removed once fired.
  const hook: SubmitHook = (op, task, submit) => {
    if (!pending || (options.op !== undefined && op !== options.op) || seen++ < afterTasks) return submit(task);
    fired = true;
    pending = false;
    removeSubmitHook(pool, hook);
    return submit({ kind: 'fault', action: options.action, task } satisfies FaultTask, TESTING_WORKER_URL);
  };
  setSubmitHook(pool, hook);
  return {
    get fired() {
      return fired;
    },
    cancel() {
      pending = false;
      removeSubmitHook(pool, hook);
    },
  };
}
