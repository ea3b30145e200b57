import type { OpName } from '@kernelkit/ops';
import { Call } from '../call.js';
import type { ResolvedOptions } from '../options.js';
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
