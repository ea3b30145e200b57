import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, WorkerError } from '@kernelkit/core';
import { verifyResult, type Backend, type OpArgs, type OpName } from '@kernelkit/ops';
import { conv2dCase, convLayerCase, randomGridCase, scanCase, stencilCase } from '@kernelkit/ops/testing';
import { createCpuBackend } from '@kernelkit/cpu';
import * as publicApi from '../src/index.js';
import { createPiscinaBackend, type PiscinaBackendOptions } from '../src/index.js';
import { FAULT_EXIT_CODE, FAULT_MESSAGE, injectFault, lastCallStats, workerCount, type FaultAction } from '../src/testing.js';

// Faults injected into real multi-task ops, mid-op: the n-th task of a call throws in its worker
// or ends the worker's thread. Every call goes to the pool (inlineBelow 0).
const POOL_ONLY = { conv2d: 0, stencil3d: 0, scan: 0, gridSearch: 0, convLayer: 0 };
const THREADS = 2;

/** Rejects (instead of hanging the suite) when `p` has not settled after `ms`: a deadlocked barrier shows as this. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms (deadlock?)`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (e: unknown) => e,
  );
}

function expectWorkerError(err: unknown, action: FaultAction, op: OpName): void {
  expect(err, `${op} must reject with WorkerError`).toBeInstanceOf(WorkerError);
  expect((err as WorkerError).message).toContain(`${op}: a worker failed`);
  const cause = (err as WorkerError).cause;
  expect(cause).toBeInstanceOf(Error);
  expect((cause as Error).message).toBe(action === 'throw' ? FAULT_MESSAGE : `worker exited with code: ${FAULT_EXIT_CODE}`);
}

/** Waits until the pool is back to its size (Piscina starts a replacement thread after an exit). */
async function expectWorkers(backend: Backend, n: number): Promise<void> {
  const t0 = performance.now();
  while (workerCount(backend) !== n && performance.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 20));
  expect(workerCount(backend)).toBe(n);
}

type Check = () => Promise<string | undefined>;

/**
 * Concurrent pool calls of the ops other than `op` (so an op-filtered fault can never hit them,
 * whatever order their tasks are submitted in); each resolves to a mismatch message or undefined.
 */
function bystanders(backend: Backend, op: OpName, seed: number): Check[] {
  const c = conv2dCase([2, 40, 36, 3], seed);
  const st = stencilCase([20, 20, 20, 3, 'zero'], seed);
  const s = scanCase('i32', 300_001, seed + 1, true, -5);
  const g = randomGridCase(seed + 2);
  const all: Record<string, Check> = {
    conv2d: () => backend.conv2d(c).then((r) => verifyResult('conv2d', c, r.data)),
    stencil3d: () => backend.stencil3d(st, { variant: 'slabs-per-step' }).then((r) => verifyResult('stencil3d', st, r.data)),
    scan: () => backend.scan(s).then((r) => verifyResult('scan', s, r.data)),
    gridSearch: () => backend.gridSearch(g, { variant: 'naive' }).then((r) => verifyResult('gridSearch', g, r.data)),
  };
  return Object.entries(all)
    .filter(([name]) => name !== op)
    .map(([, f]) => f);
}

/** Correct answers from every op and variant after the fault (no corrupted buffers, no stuck barrier). */
async function expectHealthy(backend: Backend): Promise<void> {
  const cases: { [O in OpName]?: OpArgs<O> } = {
    conv2d: conv2dCase([3, 70, 64, 5], 90),
    stencil3d: stencilCase([40, 40, 40, 5, 'copy'], 91),
    scan: scanCase('u32', 500_003, 92, false),
    gridSearch: randomGridCase(93),
  };
  for (const [op, args] of Object.entries(cases) as [OpName, object][]) {
    for (const variant of backend.variants(op)) {
      const res = await within((backend[op] as (a: unknown, o: unknown) => Promise<{ data: unknown }>)(args, { variant }), 20_000, `${op}/${variant} after the fault`);
      expect(verifyResult(op, args as never, res.data as never), `${op}/${variant} after the fault`).toBeUndefined();
      expect(lastCallStats(backend)?.inline).toBe(false);
    }
  }
}

interface FaultCase {
  readonly op: OpName;
  readonly what: string;
  readonly variant?: string;
  readonly args: () => object;
  /** Ordinary `out` of the right type and length, checked untouched afterwards; absent for grid search. */
  readonly out?: (args: object) => Float32Array | Uint32Array;
  /** Tasks of this call that run normally before the faulted one (the call submits more than that). */
  readonly afterTasks: number;
  readonly backendOptions?: PiscinaBackendOptions;
}

/** 25^4 points: 23 ranges on the pool. */
const fourAxisGrid = () => ({ dims: [0, 1, 2, 3].map(() => ({ lower: 0, upper: 12, step: 0.5 })), coefficients: [1, 1, 1, 1], targets: [20], tolerances: [2] });

const CASES: readonly FaultCase[] = [
  {
    op: 'conv2d',
    what: 'conv2d in row bands claimed by 2 tasks, the second task fails',
    args: () => conv2dCase([4, 128, 128, 5], 1),
    out: (a) => new Float32Array((a as OpArgs<'conv2d'>).input.length),
    afterTasks: 1,
    backendOptions: { callerShare: false },
  },
  {
    op: 'conv2d',
    what: "conv2d in row bands claimed by 1 task and the calling thread's share, the task fails",
    args: () => conv2dCase([4, 128, 128, 5], 2),
    out: (a) => new Float32Array((a as OpArgs<'conv2d'>).input.length),
    afterTasks: 0,
  },
  {
    op: 'convLayer',
    what: "convLayer in blocks of planes claimed by 1 task and the calling thread's share, the task fails",
    args: () => convLayerCase([8, 2, 30, 26, 8, 5], 3),
    out: (a) => {
      const l = a as OpArgs<'convLayer'>;
      return new Float32Array(l.batch * l.maps * (l.height - l.k + 1) * (l.width - l.k + 1));
    },
    afterTasks: 0,
  },
  {
    op: 'stencil3d',
    what: "6-step stencil ('slabs', 2 participants in a barrier), participant 2 fails after step 1",
    variant: 'slabs',
    args: () => stencilCase([40, 40, 40, 6, 'copy'], 2),
    out: (a) => new Float32Array((a as OpArgs<'stencil3d'>).input.length),
    afterTasks: 1,
  },
  {
    op: 'stencil3d',
    what: "6-step stencil ('wasm-simd', 2 participants in a barrier, halo planes exchanged), participant 2 fails after step 1",
    variant: 'wasm-simd',
    args: () => stencilCase([40, 40, 40, 6, 'zero'], 4),
    out: (a) => new Float32Array((a as OpArgs<'stencil3d'>).input.length),
    afterTasks: 1,
  },
  {
    op: 'stencil3d',
    what: "6-step stencil ('slabs-per-step'), a slab of step 3 fails",
    variant: 'slabs-per-step',
    args: () => stencilCase([40, 40, 40, 6, 'zero'], 3),
    out: (a) => new Float32Array((a as OpArgs<'stencil3d'>).input.length),
    afterTasks: 4,
  },
  {
    op: 'scan',
    what: 'two-pass scan in 4 chunks (3 sums, 4 local scans), a local scan fails',
    variant: 'two-pass',
    args: () => scanCase('u32', 2_000_000, 4, true, 3),
    out: (a) => new Uint32Array((a as OpArgs<'scan'>).input.length),
    afterTasks: 4,
  },
  {
    op: 'scan',
    what: "chained scan ('wasm-simd', 2 tasks passing carries unit by unit), the second task fails",
    variant: 'wasm-simd',
    args: () => scanCase('f32', 2_000_000, 5, true, 0.5),
    out: (a) => new Float32Array((a as OpArgs<'scan'>).input.length),
    afterTasks: 1,
  },
  {
    op: 'gridSearch',
    what: 'grid search in prefix ranges claimed by 2 tasks, the second task fails',
    variant: 'naive',
    args: fourAxisGrid,
    afterTasks: 1,
  },
  {
    op: 'gridSearch',
    what: 'grid search on the WebAssembly kernels in prefix ranges claimed by 2 tasks, the second task fails',
    variant: 'wasm-simd',
    args: fourAxisGrid,
    afterTasks: 1,
  },
];

describe('injected worker faults mid-op', () => {
  for (const action of ['throw', 'exit'] as const) {
    for (const c of CASES) {
      it(`${action}: ${c.what} → WorkerError (cause: the worker's error); concurrent calls, the pool and out unharmed`, async () => {
        await using backend = await createPiscinaBackend({ threads: THREADS, inlineBelow: POOL_ONLY, ...c.backendOptions });
        const args = c.args();
        const out = c.out?.(args).fill(7);
        const fault = injectFault(backend, { action, afterTasks: c.afterTasks, op: c.op });
        const options = { ...(c.variant === undefined ? {} : { variant: c.variant }), ...(out === undefined ? {} : { out }) };
        const target = (backend[c.op] as (a: unknown, o: unknown) => Promise<unknown>)(args, options);
        const others = bystanders(backend, c.op, 10).map((f) => f());
        const err = await within(rejection(target), 30_000, `the faulted ${c.op}`);
        expect(fault.fired, 'the fault must have been sent with a task of this call').toBe(true);
        expectWorkerError(err, action, c.op);
        expect(await within(Promise.all(others), 30_000, 'the concurrent calls')).toEqual(others.map(() => undefined));
        if (out !== undefined) expect(out.every((v) => v === 7), "the caller's ordinary out must be untouched").toBe(true);
        await expectWorkers(backend, THREADS);
        await expectHealthy(backend);
        await expectWorkers(backend, THREADS);
      });
    }
  }

  it('an exit in one barrier call does not hold up the barrier calls queued behind it', async () => {
    await using backend = await createPiscinaBackend({ threads: THREADS, inlineBelow: POOL_ONLY });
    const s = stencilCase([40, 40, 40, 8, 'copy'], 5);
    injectFault(backend, { action: 'exit', afterTasks: 0, op: 'stencil3d' });
    const calls = [0, 1, 2].map(() => rejection(backend.stencil3d(s, { variant: 'slabs' }).then((r) => verifyResult('stencil3d', s, r.data))));
    const [first, ...rest] = await within(Promise.all(calls), 30_000, 'three queued barrier calls');
    expectWorkerError(first, 'exit', 'stencil3d');
    expect(rest).toEqual([undefined, undefined]);
  });

  it('a cancelled fault never fires; the hook validates its options and its backend', async () => {
    await using backend = await createPiscinaBackend({ threads: THREADS, inlineBelow: POOL_ONLY });
    const fault = injectFault(backend, { action: 'exit' });
    fault.cancel();
    await expectHealthy(backend);
    expect(fault.fired).toBe(false);
    const bad: Array<[unknown, string]> = [
      [{ action: 'crash' }, 'options.action'],
      [{ action: 'throw', afterTasks: -1 }, 'options.afterTasks'],
      [{ action: 'throw', afterTasks: 1.5 }, 'options.afterTasks'],
      [{ action: 'throw', op: 'fft' }, 'options.op'],
      [null, 'options'],
    ];
    for (const [options, parameter] of bad) {
      expect(() => injectFault(backend, options as never)).toThrow(InvalidArgumentError);
      expect(() => injectFault(backend, options as never)).toThrow(parameter);
    }
    expect(() => injectFault(createCpuBackend(), { action: 'throw' })).toThrow(/createPiscinaBackend/);
  });

  it('is not reachable from the public API: the package entry exports no hook, a `fault` in args is refused by name, and one in options does nothing', async () => {
    expect(Object.keys(publicApi).sort()).toEqual(['CALLER_SHARE_MAX_WORK', 'DEFAULT_INLINE_BELOW', 'IN_PLACE_RESULT_MAX_BYTES', 'createPiscinaBackend']);
    // Workers only, so the call below is one task per thread.
    await using backend = await createPiscinaBackend({ threads: THREADS, inlineBelow: POOL_ONLY, callerShare: false });
    const c = conv2dCase([4, 128, 128, 5], 6);
    await expect(backend.conv2d({ ...c, fault: 'exit' } as never)).rejects.toMatchObject({ name: 'InvalidArgumentError', parameter: 'fault' });
    const res = await backend.conv2d(c, { fault: 'throw' } as never);
    expect(verifyResult('conv2d', c, res.data)).toBeUndefined();
    expect(lastCallStats(backend)?.tasks).toBeGreaterThan(1);
    await expectWorkers(backend, THREADS);
  });
});
