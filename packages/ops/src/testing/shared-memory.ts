import { expect, it } from 'vitest';
import type { TypedArray } from '@kernelkit/core';
import type { Backend, OpName } from '../backend.js';
import type { ScanDtype } from '../scan/types.js';
import { verifyResult } from '../verify.js';
import { changedSince, sharedCopy, snapshot } from './buffers.js';
import { conv2dCase, convLayerCase, GRID_CASES, scanCase, stencilCase } from './cases.js';

export interface SharedMemoryContext {
  /** Ops and variants to run (the suite's skips already applied). */
  readonly variants: (op: OpName) => readonly string[];
  readonly scanDtypes: readonly ScanDtype[];
}

type Call = (backend: Backend, variant: string) => Promise<void>;

/** Runs `args` (arrays in SharedArrayBuffers) and checks the result against the reference and the inputs for writes. */
async function expectShared(backend: Backend, op: OpName, args: object, variant: string, out?: TypedArray): Promise<void> {
  const before = snapshot(args);
  const options = out === undefined ? { variant } : { variant, out };
  const res = await (backend[op] as (a: unknown, o: unknown) => Promise<{ data: unknown }>)(args, options);
  if (out !== undefined) expect(res.data).toBe(out);
  const msg = verifyResult(op, args as never, res.data as never);
  if (msg !== undefined) expect.fail(`${op}/${variant} with SharedArrayBuffer inputs${out ? ' and out' : ''}: ${msg}`);
  expect(changedSince(before, args), 'shared inputs must be untouched').toBeUndefined();
}

const sharedOut = (ctor: Float32ArrayConstructor | Float64ArrayConstructor | Uint32ArrayConstructor | Int32ArrayConstructor, n: number): TypedArray =>
  sharedCopy(new ctor(n), 1);

/**
 * Every array argument of every op in a SharedArrayBuffer (at a non-zero byte offset), with and
 * without a shared `out`: must work exactly like ordinary arrays (a worker pool may take them
 * as they are, a GPU backend must upload from them).
 */
const CALLS: Readonly<Record<OpName, (scanDtypes: readonly ScanDtype[]) => Call>> = {
  conv2d: () => async (b, v) => {
    const a = conv2dCase([2, 9, 7, 3], 31);
    const args = { ...a, input: sharedCopy(a.input, 1), filter: sharedCopy(a.filter, 3) };
    await expectShared(b, 'conv2d', args, v);
    await expectShared(b, 'conv2d', args, v, sharedOut(Float32Array, a.input.length));
  },
  stencil3d: () => async (b, v) => {
    for (const steps of [1, 2]) {
      const a = stencilCase([6, 5, 4, steps, 'copy'], 32 + steps);
      const args = { ...a, input: sharedCopy(a.input, 1) };
      await expectShared(b, 'stencil3d', args, v);
      await expectShared(b, 'stencil3d', args, v, sharedOut(Float32Array, a.input.length));
    }
  },
  scan: (dtypes) => async (b, v) => {
    for (const dtype of dtypes) {
      const a = scanCase(dtype, 1000, 33, true, dtype === 'u32' ? 5 : 0);
      const args = { ...a, input: sharedCopy(a.input, 1) };
      await expectShared(b, 'scan', args, v);
      await expectShared(b, 'scan', args, v, sharedOut(a.input.constructor as Float32ArrayConstructor, a.input.length));
    }
    // In place in shared memory.
    const a = scanCase('u32', 777, 34);
    const inPlace = sharedCopy(a.input, 1);
    const res = await b.scan({ input: inPlace }, { variant: v, out: inPlace });
    expect(res.data).toBe(inPlace);
    expect(verifyResult('scan', a, inPlace)).toBeUndefined();
  },
  gridSearch: () => async (b, v) => {
    const a = GRID_CASES[0]!.args;
    const f64 = (x: Float64Array | readonly number[]) => sharedCopy(Float64Array.from(x), 1);
    await expectShared(b, 'gridSearch', { ...a, coefficients: f64(a.coefficients), targets: f64(a.targets), tolerances: f64(a.tolerances) }, v);
  },
  convLayer: () => async (b, v) => {
    const a = convLayerCase([2, 2, 8, 7, 3, 3], 35, { bias: true, relu: true });
    const args = { ...a, input: sharedCopy(a.input, 1), weights: sharedCopy(a.weights, 2), bias: sharedCopy(a.bias!, 3) };
    await expectShared(b, 'convLayer', args, v);
    await expectShared(b, 'convLayer', args, v, sharedOut(Float32Array, 2 * 3 * 6 * 5));
  },
};

/** Registers one test per op: each variant with SharedArrayBuffer-backed inputs (and `out`). */
export function describeSharedMemory(backend: Backend, ctx: SharedMemoryContext): void {
  for (const op of Object.keys(CALLS) as OpName[]) {
    const variants = ctx.variants(op);
    if (variants.length === 0) continue;
    const call = CALLS[op](ctx.scanDtypes.filter((d) => d !== 'f64' || backend.info.capabilities.f64));
    const what = op === 'gridSearch' ? 'Float64Array coefficients, targets and tolerances' : op === 'scan' ? 'input and out (also in place)' : 'inputs and out';
    it(`${op}: ${what} in SharedArrayBuffers work like ordinary arrays (${variants.join(', ')})`, async () => {
      for (const v of variants) await call(backend, v);
    });
  }
}
