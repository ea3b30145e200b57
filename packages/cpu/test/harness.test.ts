import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '@kernelkit/core';
import type { Backend, OpName } from '@kernelkit/ops';
import {
  abortBatchProblems,
  assertProperty,
  concurrentBatchProblems,
  DEFAULT_FC_SEED,
  fcSeedFromEnv,
  lifetimeCyclesFromEnv,
  propertyRunsFromEnv,
  rerunHint,
  runLifetimeCycles,
  type ConcurrencyContext,
} from '@kernelkit/ops/testing';
import { createCpuBackend } from '../src/index.js';

// The shared reliability harness (in @kernelkit/ops/testing) checked against broken backends:
// each check must catch the fault it exists for. The CPU backend is the healthy base.

const OPS: readonly OpName[] = ['conv2d', 'stencil3d', 'scan', 'gridSearch', 'convLayer'];
const CTX: ConcurrencyContext = { variants: (op) => createCpuBackend().variants(op), scanDtypes: ['u32', 'i32', 'f32'], calls: 32 };

type AnyOp = (args: unknown, options?: Record<string, unknown>) => Promise<{ data: unknown }>;

/** `base` with every op replaced by `wrap(op, original)`. */
function mutant(base: Backend, wrap: (op: OpName, run: AnyOp) => AnyOp): Backend {
  const ops = Object.fromEntries(OPS.map((op) => [op, wrap(op, (base[op] as AnyOp).bind(base))]));
  return Object.assign(Object.create(base) as Backend, ops);
}

describe('concurrency checks catch', () => {
  it('nothing on a healthy backend', async () => {
    const b = createCpuBackend();
    expect(await concurrentBatchProblems(b, CTX, 1)).toEqual([]);
    expect(await abortBatchProblems(b, CTX, 2)).toEqual([]);
  });

  it('a result corrupted while another call is in flight', async () => {
    let inflight = 0;
    const b = mutant(createCpuBackend(), (op, run) => async (a, o) => {
      inflight++;
      await new Promise((r) => setTimeout(r, 1));
      const res = await run(a, o);
      const d = res.data as { points?: Float64Array } & ArrayLike<number>;
      const arr = (op === 'gridSearch' ? d.points : d) as unknown as Float32Array;
      if (inflight > 1 && arr !== undefined && arr.length > 0) arr[0] = arr[0]! + 1;
      inflight--;
      return res;
    });
    const problems = await concurrentBatchProblems(b, CTX, 3);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]).toMatch(/^call \d+ \(/);
  });

  it('a backend that ignores abort signals', async () => {
    const b = mutant(createCpuBackend(), (_op, run) => (a, o) => run(a, o && { ...o, signal: undefined }));
    const problems = await abortBatchProblems(b, CTX, 4);
    expect(problems.some((p) => /fulfilled although its signal was aborted before the call/.test(p))).toBe(true);
    expect(problems.some((p) => /fulfilled although its signal was aborted right after issuing it/.test(p))).toBe(true);
  });

  it('a backend that writes an input', async () => {
    const b = mutant(createCpuBackend(), (_op, run) => async (a, o) => {
      const res = await run(a, o);
      const input = (a as { input?: Float32Array }).input;
      if (input !== undefined && input.length > 0) input[0] = 12345;
      return res;
    });
    const problems = await concurrentBatchProblems(b, CTX, 5);
    expect(problems.some((p) => /args\.input was written/.test(p))).toBe(true);
  });
});

describe('lifetime cycles catch', () => {
  it('a resource left after dispose, naming it and the cycle', async () => {
    let handles = 0;
    const create = () => {
      handles++;
      return mutant(createCpuBackend(), (_op, run) => run);
    };
    await expect(runLifetimeCycles('leaky', create, { cycles: 5, sample: (b) => ({ handles: b.disposed && handles > 2 ? 1 : 0 }) })).rejects.toThrow(
      /leaky: cycle 3: handles = 1 after dispose, at most 0 allowed/,
    );
  });

  it('an alive resource creeping up past the first 10 % of cycles', async () => {
    let n = 0;
    await expect(runLifetimeCycles('creep', () => (n++, createCpuBackend()), { cycles: 20, sample: (b) => ({ buffers: b.disposed ? 0 : n > 10 ? 3 : 2 }) })).rejects.toThrow(
      /creep: cycle 11: buffers = 3 while alive, more than 2/,
    );
  });

  it('RSS growth above the bound', async () => {
    const kept: Uint8Array[] = [];
    try {
      const create = () => {
        // 4 MiB per cycle, touched so that it counts in RSS, and never released.
        kept.push(new Uint8Array(4 * 2 ** 20).fill(1));
        return createCpuBackend();
      };
      await expect(runLifetimeCycles('bloat', create, { cycles: 20, rssGrowthMiB: 16 })).rejects.toThrow(/bloat: RSS outside V8's young generation grew \d+\.\d MiB between cycle 10 and cycle 20, more than 16 MiB/);
    } finally {
      kept.length = 0;
    }
  });

  it('JavaScript objects kept per cycle (heap used)', async () => {
    const kept: { i: number }[][] = [];
    try {
      const create = () => {
        // About 4 MiB of small objects per cycle: they outlive the young generation.
        kept.push(Array.from({ length: 2 ** 17 }, (_, i) => ({ i })));
        return createCpuBackend();
      };
      await expect(runLifetimeCycles('objects', create, { cycles: 20 })).rejects.toThrow(/objects: the V8 heap's used size grew \d+\.\d MiB between cycle 2 and cycle 20, more than 16 MiB/);
    } finally {
      kept.length = 0;
    }
  });

  it('a handle left open per cycle (process.getActiveResourcesInfo)', async () => {
    const timers: NodeJS.Timeout[] = [];
    try {
      const create = () => {
        timers.push(setInterval(() => {}, 60_000));
        return createCpuBackend();
      };
      await expect(runLifetimeCycles('handles', create, { cycles: 10 })).rejects.toThrow(/handles: process\.getActiveResourcesInfo\(\) has \d+ Timeout after cycle 10/);
    } finally {
      for (const t of timers) clearInterval(t);
    }
  });

  it('a wrong result in a cycle', async () => {
    const b = () =>
      mutant(createCpuBackend(), (op, run) => async (a, o) => {
        const res = await run(a, o);
        const d = res.data as Uint32Array;
        if (op === 'scan') d[3] = d[3]! + 1;
        return res;
      });
    await expect(runLifetimeCycles('wrong', b, { cycles: 2 })).rejects.toThrow(/cycle 1: scan\/sequential: \[3\] got/);
  });

  it('validates its options', async () => {
    await expect(runLifetimeCycles('x', () => createCpuBackend(), { cycles: 0 })).rejects.toThrow(InvalidArgumentError);
    await expect(runLifetimeCycles('x', () => createCpuBackend(), { cycles: 1, rssGrowthMiB: -1 })).rejects.toThrow('options.rssGrowthMiB');
    await expect(runLifetimeCycles('x', () => createCpuBackend(), { cycles: 1, heapGrowthMiB: Number.NaN })).rejects.toThrow('options.heapGrowthMiB');
  });
});

describe('environment knobs', () => {
  it('KERNELKIT_FC_RUNS: unset → undefined, a positive integer → it, anything else → an error naming the variable', () => {
    expect(propertyRunsFromEnv({})).toBeUndefined();
    expect(propertyRunsFromEnv({ KERNELKIT_FC_RUNS: '' })).toBeUndefined();
    expect(propertyRunsFromEnv({ KERNELKIT_FC_RUNS: '2000' })).toBe(2000);
    expect(propertyRunsFromEnv({ KERNELKIT_FC_RUNS: ' 7 ' })).toBe(7);
    for (const bad of ['0', '-5', '1.5', 'many', '1e3', '99999999999999999999']) {
      expect(() => propertyRunsFromEnv({ KERNELKIT_FC_RUNS: bad }), bad).toThrow(InvalidArgumentError);
      expect(() => propertyRunsFromEnv({ KERNELKIT_FC_RUNS: bad }), bad).toThrow(/KERNELKIT_FC_RUNS: environment variable must be a positive integer/);
    }
  });

  it('KERNELKIT_LIFETIME_CYCLES: same rules', () => {
    expect(lifetimeCyclesFromEnv({})).toBeUndefined();
    expect(lifetimeCyclesFromEnv({ KERNELKIT_LIFETIME_CYCLES: '1000' })).toBe(1000);
    expect(() => lifetimeCyclesFromEnv({ KERNELKIT_LIFETIME_CYCLES: 'lots' })).toThrow(/KERNELKIT_LIFETIME_CYCLES/);
  });

  it('KERNELKIT_FC_SEED: default, an integer, `random` (one per process), else an error naming it', () => {
    expect(fcSeedFromEnv({})).toBe(DEFAULT_FC_SEED);
    expect(fcSeedFromEnv({ KERNELKIT_FC_SEED: '-42' })).toBe(-42);
    const r = fcSeedFromEnv({ KERNELKIT_FC_SEED: 'random' });
    expect(Number.isInteger(r)).toBe(true);
    expect(fcSeedFromEnv({ KERNELKIT_FC_SEED: 'RANDOM' })).toBe(r);
    for (const bad of ['1.5', 'abc', String(2 ** 31)]) expect(() => fcSeedFromEnv({ KERNELKIT_FC_SEED: bad }), bad).toThrow(/KERNELKIT_FC_SEED/);
  });

  it('a failing property reports fast-check’s seed and path plus how to re-run it', async () => {
    const settings = { runs: 50, seed: 1234 };
    const err = await assertProperty(
      fc.asyncProperty(fc.integer({ min: 0, max: 1000 }), async (n) => {
        expect(n).toBeLessThan(500);
      }),
      settings,
    ).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).toMatch(/Property failed after \d+ tests\n\{ seed: 1234, path: "[\d:]+"/);
    expect(err!.message).toContain('Counterexample: [500]');
    expect(err!.message).toContain(rerunHint(settings));
    expect(err!.message).toContain('KERNELKIT_FC_SEED=1234 KERNELKIT_FC_RUNS=50 npm run fuzz');
    expect(err!.cause).toBeInstanceOf(Error);
  });
});
