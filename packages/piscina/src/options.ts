import os from 'node:os';
import { assertInteger, assertObject, describeValue, InvalidArgumentError } from '@kernelkit/core';
import { OP_NAMES, type OpName } from '@kernelkit/ops';

export interface PiscinaBackendOptions {
  /** Worker threads; shorthand for `minThreads = maxThreads = threads`. Default `os.availableParallelism()`. */
  readonly threads?: number;
  /** Threads kept alive while idle; default `maxThreads` (a compute pool should not pay for respawns). */
  readonly minThreads?: number;
  /** Most threads, and the number the work is partitioned for; default `threads`. */
  readonly maxThreads?: number;
  /**
   * Per op, the work size (in the op's work units, see `workUnits`) below which a call runs inline
   * on the calling thread instead of on the pool. 0 sends everything to the pool; `Infinity`
   * runs everything inline. Ops not named keep `DEFAULT_INLINE_BELOW`.
   */
  readonly inlineBelow?: Partial<Record<OpName, number>>;
  /**
   * Whether the calling thread computes a share of a pooled conv2d or convLayer `wasm-simd` call
   * (threads − 1 workers and it) when that share is at most `CALLER_SHARE_MAX_WORK` multiply-adds.
   * It then blocks the event loop for that share. Default true; false keeps the calling thread
   * to staging and waiting.
   */
  readonly callerShare?: boolean;
}

export interface ResolvedOptions {
  readonly minThreads: number;
  readonly maxThreads: number;
  readonly inlineBelow: Readonly<Record<OpName, number>>;
  readonly callerShare: boolean;
}

/**
 * Default inline thresholds, in work units (conv2d and convLayer: multiply-adds; stencil3d:
 * cell updates = cells × steps; scan: elements; gridSearch: grid points), for each op's default
 * variant.
 *
 * Rule: run inline where the pool does not win on two threads. A pool call has a fixed cost
 * (task messages, staging, promise turns) of about half a millisecond, and with two threads it
 * can win at best by half the work. conv2d, convLayer and stencil3d run WebAssembly kernels by
 * default, which do a millisecond of work in 2^23–2^25 units, so their thresholds are far higher
 * than gridSearch's (a JavaScript kernel). The numbers come from ladders of sizes run inline and
 * pooled with two threads (`node apps/studies/dist/piscina/threshold.js --threads 2`); on more
 * cores the pool wins earlier, so they are conservative there. Scan is the exception: its
 * WebAssembly kernel inline beat the pool up to the ladder's top (2^21) on 16 threads too.
 */
export const DEFAULT_INLINE_BELOW: Readonly<Record<OpName, number>> = {
  conv2d: 2 ** 24,
  stencil3d: 2 ** 21,
  scan: 2 ** 21,
  gridSearch: 2 ** 16,
  convLayer: 2 ** 25,
};

/**
 * The largest share of a pooled conv call, in multiply-adds, the calling thread computes (see
 * `callerShare`): it blocks the event loop (and a caller's abort) for that long, which at this
 * size is milliseconds on the WebAssembly kernels.
 */
export const CALLER_SHARE_MAX_WORK = 2 ** 26;

const MAX_THREADS = 1024;
const KNOWN = ['threads', 'minThreads', 'maxThreads', 'inlineBelow', 'callerShare'] as const;

export function resolveOptions(options: PiscinaBackendOptions | undefined): ResolvedOptions {
  if (options === undefined) options = {};
  assertObject(options, 'options');
  for (const key of Object.keys(options)) {
    if (!(KNOWN as readonly string[]).includes(key)) {
      throw new InvalidArgumentError(`options.${key}`, `unknown option; expected one of ${KNOWN.join(', ')}`);
    }
  }
  if (options.threads !== undefined) assertInteger(options.threads, 'options.threads', 1, MAX_THREADS);
  if (options.maxThreads !== undefined) assertInteger(options.maxThreads, 'options.maxThreads', 1, MAX_THREADS);
  if (options.minThreads !== undefined) assertInteger(options.minThreads, 'options.minThreads', 0, MAX_THREADS);
  const maxThreads = options.maxThreads ?? options.threads ?? Math.max(1, Math.min(MAX_THREADS, os.availableParallelism()));
  const minThreads = options.minThreads ?? Math.min(options.threads ?? maxThreads, maxThreads);
  if (minThreads > maxThreads) {
    throw new InvalidArgumentError('options.minThreads', `must be <= maxThreads (${maxThreads}), got ${minThreads}`);
  }
  const inlineBelow: Record<OpName, number> = { ...DEFAULT_INLINE_BELOW };
  if (options.inlineBelow !== undefined) {
    assertObject(options.inlineBelow, 'options.inlineBelow');
    for (const [op, v] of Object.entries(options.inlineBelow)) {
      const name = `options.inlineBelow.${op}`;
      if (!(OP_NAMES as readonly string[]).includes(op)) throw new InvalidArgumentError(name, `unknown op; expected one of ${OP_NAMES.join(', ')}`);
      if (typeof v !== 'number' || Number.isNaN(v) || v < 0) {
        throw new InvalidArgumentError(name, `expected a number >= 0 (work units; Infinity = always inline), got ${describeValue(v)}`);
      }
      inlineBelow[op as OpName] = v;
    }
  }
  const callerShare: unknown = options.callerShare;
  if (callerShare !== undefined && typeof callerShare !== 'boolean') {
    throw new InvalidArgumentError('options.callerShare', `expected a boolean, got ${describeValue(callerShare)}`);
  }
  return { minThreads, maxThreads, inlineBelow, callerShare: callerShare ?? true };
}

/**
 * Most bytes of module memory a conv call without an `out` hands over as its result in place. The
 * memory holds the input too, and comes back only once the result is collected: past this a call
 * often finds none free and pays a fresh memory's page faults (and keeps the input alive with the
 * result), so larger calls take a memory that is reused at once and copy their output out.
 */
export const IN_PLACE_RESULT_MAX_BYTES = 64 * 2 ** 20;
