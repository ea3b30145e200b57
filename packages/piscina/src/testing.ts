/**
 * Testing hooks: reach into a Piscina backend's pool to exercise failure paths and observe the
 * data path. Not part of the ops; exported as `@kernelkit/piscina/testing`.
 */
import { InvalidArgumentError, WorkerError } from '@kernelkit/core';
import type { Backend } from '@kernelkit/ops';
import { POOLS } from './backend.js';
import type { CallStats, Pool } from './pool.js';
import type { TestTask } from './protocol.js';

export type { CallStats } from './pool.js';

function poolOf(backend: Backend): Pool {
  const pool = POOLS.get(backend);
  if (pool === undefined) throw new InvalidArgumentError('backend', 'not a backend made by createPiscinaBackend');
  return pool;
}

/**
 * Runs a test-only task on one worker: `'throw'` throws a TypeError there, `'exit'` ends the
 * worker's thread with `process.exit(70)`, `'sleep'` blocks it for `ms`. Failures reject with
 * WorkerError whose `cause` is the worker's error, exactly as an op's would.
 */
export async function runWorkerTestTask(backend: Backend, action: TestTask['action'], ms?: number): Promise<unknown> {
  const pool = poolOf(backend);
  try {
    return await pool.piscina.run({ kind: 'test', action, ...(ms === undefined ? {} : { ms }) } satisfies TestTask);
  } catch (err) {
    throw new WorkerError(`test task: a worker failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** What the backend's last completed call did: inline or pooled, tasks, bytes copied in and out. */
export function lastCallStats(backend: Backend): CallStats | undefined {
  return poolOf(backend).lastStats;
}

/** Live worker threads of the backend's pool. */
export function workerCount(backend: Backend): number {
  return poolOf(backend).piscina.threads.length;
}
