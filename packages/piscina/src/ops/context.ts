import type { OpName } from '@kernelkit/ops';
import { Call } from '../call.js';
import type { ModuleMemory, Ref } from '../protocol.js';
import { IN_PLACE_RESULT_MAX_BYTES, type ResolvedOptions } from '../options.js';
import type { Pool } from '../pool.js';

/** What every op runner needs: the pool, the options, and the inline decision. */
export interface Env {
  readonly pool: Pool;
  readonly options: ResolvedOptions;
}

export function inline(env: Env, op: OpName, work: number): boolean {
  if (!(work < env.options.inlineBelow[op])) return false;
  env.pool.lastStats = { op, inline: true, tasks: 0, copiedInBytes: 0, copiedOutBytes: 0 };
  return true;
}

export function newCall(env: Env, op: OpName, signal: AbortSignal | undefined): Call {
  return new Call(env.pool, op, signal);
}

export const INLINE_NOTE = 'ran inline on the calling thread (below options.inlineBelow)';

/** Copy timings, reported as upload/readback when the caller asks for timing. */
export function copyTimes(call: Call, timing: boolean): { uploadMs?: number; readbackMs?: number } {
  return timing ? { uploadMs: call.uploadMs, readbackMs: call.readbackMs } : {};
}

/**
 * The shared module memory a conv call runs in: without an `out` and up to
 * `IN_PLACE_RESULT_MAX_BYTES`, one the result stays in (see `moduleOutput`), else one from the
 * pool's cache. `layout`: see `Call.memory`.
 */
export function moduleMemory(call: Call, bytes: number, out: Float32Array | undefined, layout?: string): { readonly memory: ModuleMemory; readonly sameLayout: boolean; readonly forCaller?: SharedArrayBuffer } {
  return out === undefined && bytes <= IN_PLACE_RESULT_MAX_BYTES ? call.resultModuleMemory(bytes, layout) : call.memory(bytes, layout);
}

/** Where a module-memory conv call's output goes: `ref`, what the workers copy their part into (none: it is already where it belongs). */
export interface ModuleOutput {
  readonly ref: Ref | undefined;
  /** Once every task succeeded: fills a caller's ordinary `out`. */
  complete(): void;
  result(): Float32Array;
}

/**
 * The output of a conv call whose kernels write `length` floats at float offset `at` of module
 * memory `m`. With `forCaller` (no `out`) the result is those floats in place, a view through the
 * caller's own handle on the memory: no copy. A shared `out` is written by the workers; an
 * ordinary one is filled from the memory in one copy once the call has succeeded.
 */
export function moduleOutput(call: Call, m: Float32Array, forCaller: SharedArrayBuffer | undefined, at: number, length: number, out: Float32Array | undefined): ModuleOutput {
  if (forCaller !== undefined) {
    const view = new Float32Array(forCaller, at * 4, length);
    return { ref: undefined, complete: () => {}, result: () => view };
  }
  const staging = m.subarray(at, at + length);
  const o = call.output(Float32Array, length, out, staging);
  return { ref: o.view === staging ? undefined : o.ref, complete: () => o.complete(), result: () => o.result() };
}
