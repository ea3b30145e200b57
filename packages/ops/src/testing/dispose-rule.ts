import { expect, it } from 'vitest';
import { DisposedError } from '@kernelkit/core';
import type { Backend, OpName } from '../backend.js';
import { OP_NAMES } from '../backend.js';
import { verifyResult } from '../verify.js';
import { conv2dCase, convLayerCase, GRID_CASES, scanCase, stencilCase } from './cases.js';

export interface DisposeRuleOptions {
  /**
   * `'full'` (default): calls big enough to still be running when dispose() is called on a CPU
   * backend; `'reduced'`: small ones, for software GPU adapters.
   */
  readonly scale?: 'full' | 'reduced';
  /** Variants to call per op; default every variant the backend lists. */
  readonly variants?: (op: OpName, backend: Backend) => readonly string[];
  readonly timeoutMs?: number;
}

type AnyCall = (args: unknown, options?: unknown) => Promise<{ data: unknown }>;
const callOf = (backend: Backend, op: OpName): AnyCall => (backend[op] as AnyCall).bind(backend);

/** One call's arguments per op; `full` ones take tens of milliseconds on one CPU thread. */
function argsFor(op: OpName, scale: 'full' | 'reduced', seed: number): object {
  const full = scale === 'full';
  switch (op) {
    case 'conv2d':
      return conv2dCase(full ? [1, 384, 384, 9] : [1, 33, 31, 5], seed);
    case 'stencil3d':
      return stencilCase(full ? [48, 48, 48, 20, 'copy'] : [9, 8, 7, 3, 'copy'], seed);
    case 'scan':
      return scanCase('u32', full ? 2_000_003 : 4097, seed);
    case 'gridSearch':
      return GRID_CASES[full ? 1 : 4]!.args;
    case 'convLayer':
      return convLayerCase(full ? [4, 3, 64, 64, 8, 5] : [1, 2, 9, 9, 3, 3], seed, { bias: true, relu: true });
  }
}

/** Ops that can return a DeviceArray. */
const DEVICE_OPS = OP_NAMES.filter((op) => op !== 'gridSearch');

/**
 * Registers the tests of the dispose rule every backend shares (it lives in `createBackend`):
 * dispose() stops taking calls at once, lets the calls already made finish with their results
 * (a call asking for `output: 'device'` rejects with `DisposedError`), then releases and
 * resolves; calling it twice, or through `Symbol.asyncDispose`, is the same.
 */
export function describeDisposeRule(name: string, create: () => Backend | Promise<Backend>, options: DisposeRuleOptions = {}): void {
  const scale = options.scale ?? 'full';
  const timeout = options.timeoutMs ?? 120_000;
  const variantsOf = (op: OpName, b: Backend): readonly string[] => options.variants?.(op, b) ?? b.variants(op);

  it(`${name}: calls in flight when dispose() is called finish with correct results; dispose() resolves after them; later calls reject with DisposedError`, { timeout }, async () => {
    const backend = await create();
    const calls: { label: string; op: OpName; args: object; promise: Promise<{ data: unknown }> }[] = [];
    let seed = 1;
    for (const op of OP_NAMES) {
      for (const variant of variantsOf(op, backend)) {
        const args = argsFor(op, scale, seed++);
        calls.push({ label: `${op}/${variant}`, op, args, promise: callOf(backend, op)(args, { variant }) });
      }
    }
    const settled = new Set<string>();
    for (const c of calls) c.promise.then(() => settled.add(c.label), () => settled.add(c.label));
    const disposing = backend.dispose();
    expect(backend.disposed, 'disposed right after dispose() is called').toBe(true);
    // Made after dispose() was called, before it resolved.
    await expect(callOf(backend, 'conv2d')(argsFor('conv2d', 'reduced', 99)), 'a call made while dispose() runs').rejects.toBeInstanceOf(DisposedError);
    await disposing;
    const unsettled = calls.filter((c) => !settled.has(c.label)).map((c) => c.label);
    expect(unsettled, 'calls still unsettled when dispose() resolved').toEqual([]);
    for (const c of calls) {
      const res = await c.promise.catch((e: unknown) => {
        throw new Error(`${name}: ${c.label}, in flight at dispose(), rejected: ${String(e)}`, { cause: e });
      });
      const msg = verifyResult(c.op, c.args as never, res.data as never);
      expect(msg, `${c.label}, in flight at dispose()`).toBeUndefined();
    }
    for (const op of OP_NAMES) {
      await expect(callOf(backend, op)(argsFor(op, 'reduced', 7)), `${op} after dispose() resolved`).rejects.toBeInstanceOf(DisposedError);
    }
  });

  it(`${name}: a call in flight asking for output 'device' rejects with DisposedError; dispose() still resolves`, { timeout }, async () => {
    const backend = await create();
    // Each outcome is caught at once: the calls may reject while dispose() is still under way,
    // before the checks below run, and a rejection nobody handles yet fails the run.
    const calls = DEVICE_OPS.map((op) => ({ op, outcome: callOf(backend, op)(argsFor(op, scale, 11), { output: 'device' }).then(() => 'resolved', (err: unknown) => err) }));
    await backend.dispose();
    for (const c of calls) expect(await c.outcome, `${c.op} with output 'device'`).toBeInstanceOf(DisposedError);
  });

  it(`${name}: dispose() twice and [Symbol.asyncDispose] give the same promise; a device result made before dispose() is disposed by it`, { timeout }, async () => {
    const backend = await create();
    const res = await callOf(backend, 'scan')(argsFor('scan', 'reduced', 3), { output: 'device' });
    const handle = res.data as { disposed: boolean };
    expect(handle.disposed).toBe(false);
    const first = backend.dispose();
    expect(backend.dispose(), 'a second dispose()').toBe(first);
    expect(backend[Symbol.asyncDispose](), '[Symbol.asyncDispose]()').toBe(first);
    await first;
    expect(handle.disposed, "a DeviceArray the backend returned, after the backend's dispose").toBe(true);
    await backend.dispose();
  });
}
