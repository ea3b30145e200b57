import fc from 'fast-check';
import { expect, it } from 'vitest';
import { AbortError } from '@kernelkit/core';
import type { Backend, OpArgs, OpName } from '../backend.js';
import { OP_NAMES } from '../backend.js';
import { OPS } from '../descriptors.js';
import { verifyResult } from '../verify.js';
import { conv2dCase, convLayerCase, randomGridCase, scanCase, stencilCase } from './cases.js';
import { abortTimings, assertProperty, signalAt, wrapArguments, type ArgumentForm, type PropertySettings } from './property.js';

/** A small random problem of `op` from `seed` (f32 and integer scans only: every backend runs them). */
function smallProblem(op: OpName, seed: number): object {
  const r = (n: number, k: number): number => (((seed >>> k) % n) + n) % n;
  switch (op) {
    case 'conv2d':
      return conv2dCase([1 + r(2, 0), 1 + r(9, 2), 1 + r(9, 6), 1 + 2 * r(3, 10)], seed);
    case 'stencil3d':
      return stencilCase([1 + r(7, 0), 1 + r(7, 3), 1 + r(5, 6), r(4, 9), r(2, 12) === 0 ? 'zero' : 'copy'], seed);
    case 'scan':
      return scanCase((['u32', 'i32', 'f32'] as const)[r(3, 0)]!, r(300, 2), seed, r(2, 11) === 1, 0);
    case 'gridSearch':
      return randomGridCase(seed);
    case 'convLayer': {
      const k = 1 + r(3, 0);
      return convLayerCase([1 + r(2, 2), 1 + r(3, 4), k + r(5, 6), k + r(5, 9), 1 + r(3, 12), k], seed);
    }
  }
}

/**
 * Per op: random small problems whose argument object is plain, getters or a Proxy (fields
 * answering garbage after the first read), with `out` or not, and a signal that never fires,
 * fires before the call or at a random moment during it. Every call must either give the
 * reference result of the first answers (in the caller's `out` when given) or reject with
 * AbortError after its signal fired, leaving `out` untouched.
 */
export function describeHostileProperties(backend: Backend, ops: readonly OpName[], settings: PropertySettings): void {
  const runs = `${settings.runs} runs, seed ${settings.seed}`;
  for (const op of OP_NAMES.filter((o) => ops.includes(o))) {
    it(`property: ${op} with getter or Proxy arguments and a signal aborting at random times (${runs})`, async () => {
      await assertProperty(
        fc.asyncProperty(fc.integer(), fc.constantFrom<ArgumentForm>('plain', 'getters', 'proxy'), abortTimings, fc.boolean(), async (seed, form, timing, withOut) => {
          const plain = smallProblem(op, seed);
          const allocOut = OPS[op].allocOut as ((p: never) => ArrayLike<number> & { fill(v: number): unknown }) | undefined;
          const out = withOut && allocOut !== undefined ? allocOut(OPS[op].validate(plain as never) as never) : undefined;
          out?.fill(42);
          const { signal, cancel } = signalAt(timing);
          const options = { ...(signal === undefined ? {} : { signal }), ...(out === undefined ? {} : { out }) };
          const call = (backend[op] as (a: unknown, o: unknown) => Promise<{ data: unknown }>)(wrapArguments(plain, form), options);
          const settled = await call.then(
            (res) => ({ res }),
            (err: unknown) => ({ err }),
          );
          cancel();
          if ('err' in settled) {
            expect(settled.err, String(settled.err)).toBeInstanceOf(AbortError);
            expect(signal?.aborted).toBe(true);
            if (out !== undefined) expect(Array.from(out).every((v) => v === 42), 'out written by an aborted call').toBe(true);
            return;
          }
          const msg = verifyResult(op, plain as OpArgs<typeof op>, settled.res.data as never);
          if (msg !== undefined) expect.fail(`${form}: ${msg}`);
          if (out !== undefined) expect(settled.res.data).toBe(out);
        }),
        settings,
      );
    });
  }
}
