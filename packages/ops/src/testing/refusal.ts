import { InvalidArgumentError, LimitExceededError } from '@kernelkit/core';
import type { Backend, OpName } from '../backend.js';
import type { BadInputCase, ErrorClass } from './bad-input-cases.js';
import { changedSince, isDetachedView, snapshot } from './buffers.js';

/** What a refusal check needs of a bad-input or oversize row. */
export interface Refusal {
  readonly op: OpName;
  readonly make: BadInputCase['make'];
  readonly error: ErrorClass;
  readonly parameter: string | undefined;
}

/**
 * Calls the op and returns what is wrong with its refusal, or undefined: it must reject with
 * `error` naming `parameter` (in `.parameter` where the error has one, and in the message),
 * and leave the caller's arrays and `out` untouched byte for byte. Free of vitest: the suites
 * assert on it, the GPU-host reliability run reports it.
 */
export async function refusalProblem(backend: Backend, row: Refusal, variant: string | undefined): Promise<string | undefined> {
  const made = row.make();
  const args = made.args;
  const options = variant === undefined ? made.options : { ...made.options, variant };
  const out = options?.out as ArrayBufferView | undefined;
  // A distinctive fill, so that a partial write into `out` shows (unless `out` is an input: then it must keep the input).
  if (out !== undefined && !isDetachedView(out) && out.buffer !== (args as { input?: ArrayBufferView } | null)?.input?.buffer) {
    (out as Float32Array).fill(42);
  }
  const before = snapshot(args);
  const outBefore = out === undefined ? undefined : snapshot(out);
  const err = await (backend[row.op] as (a: unknown, o?: unknown) => Promise<unknown>)(args, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof row.error)) return `expected ${row.error.name}, got ${err === undefined ? 'a result' : String(err)}`;
  if (row.parameter !== undefined) {
    if ((err instanceof InvalidArgumentError || err instanceof LimitExceededError) && err.parameter !== row.parameter) return `names parameter ${err.parameter}, expected ${row.parameter}`;
    if (!(err as Error).message.includes(row.parameter)) return `message does not name ${row.parameter}: ${(err as Error).message}`;
  }
  const changed = changedSince(before, args);
  if (changed !== undefined) return `the caller's arguments changed: ${changed}`;
  const outChanged = out === undefined ? undefined : changedSince(outBefore, out, 'options.out');
  if (outChanged !== undefined) return `options.out changed: ${outChanged}`;
  return undefined;
}
