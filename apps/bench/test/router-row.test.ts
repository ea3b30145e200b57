import { describe, expect, it } from 'vitest';
import { makeScanArgs, type OpArgs, type OpName } from '@kernelkit/ops';
import { TRIAL_MAX_CALLS, WARM_UP_MAX_CALLS } from 'kernelkit';
import type { CallOutput, Contender } from '../src/backends.js';
import { routeSummary, settleRouter, warmUntilResultsReused } from '../src/run.js';
import { resultsHeldBetweenCollections, RESULT_MIN_BYTES } from '@kernelkit/core';

/** A contender whose call answers `reply(n)` for its n-th call (from 0), counting its calls. */
function standIn(name: 'kernelkit' | 'cpu', reply: (n: number) => CallOutput | Promise<CallOutput>): Contender & { calls: number } {
  const c = {
    name,
    info: { description: 'stand-in', software: false },
    disposed: false,
    calls: 0,
    variants: () => ['x'],
    call: async () => reply(c.calls++),
    dispose: async () => {},
  };
  return c;
}

/** A router stand-in whose calls report the given routes in turn (the last one repeats). */
const scripted = (routes: readonly NonNullable<CallOutput['route']>[]) => standIn('kernelkit', (n) => ({ data: new Uint32Array(1), route: routes[Math.min(n, routes.length - 1)] }));

const args = makeScanArgs({ n: 4, dtype: 'u32' }) as OpArgs<OpName>;

describe("the kernelkit row's exploration before timing", () => {
  it('calls until the route is settled and notes the calls and the trials', async () => {
    const exploring = { settled: false, candidates: 2 };
    const b = scripted([exploring, { ...exploring, trials: { 'cpu/sequential': 4 } }, { ...exploring, trials: { 'cpu/sequential': 4, 'piscina/two-pass': 2.5 } }, { settled: true, trials: { 'cpu/sequential': 4, 'piscina/two-pass': 2.5 } }]);
    const note = await settleRouter(b, 'scan', args);
    expect(b.calls).toBe(4);
    expect(note).toMatch(/^router settled after 4 calls \(\d+\.\d s\); trials: cpu\/sequential 4\.0 ms, piscina\/two-pass 2\.5 ms$/);
  });

  it('notes the predictions of the pick and the runner-up, which say why a candidate was never tried', async () => {
    const b = scripted([{ settled: true, backend: 'piscina', variant: 'wasm-simd', trials: { 'piscina/wasm-simd': 76 }, predictedMs: 29033.9, runnerUp: { backend: 'webgpu', variant: 'pruned', predictedMs: 7353.24 } }]);
    expect(await settleRouter(b, 'scan', args)).toMatch(/; trials: piscina\/wasm-simd 76\.0 ms; predicted: piscina\/wasm-simd 29033\.9 ms, runner-up webgpu\/pruned 7353\.2 ms$/);
  });

  it('stops at WARM_UP_MAX_CALLS + TRIAL_MAX_CALLS calls per candidate (the longest warm-up and trial), as many for each of a close race, and two more when the route never settles', async () => {
    const b = scripted([{ settled: false, candidates: 3 }]);
    const most = (WARM_UP_MAX_CALLS + TRIAL_MAX_CALLS) * (3 + 2) + 2;
    expect(await settleRouter(b, 'scan', args)).toMatch(new RegExp(`^router not settled after ${most} calls`));
    expect(b.calls).toBe(most);
  });
});

describe("the kernelkit row's route", () => {
  it('says which backend and variant its timed calls went to', async () => {
    const { createCpuBackend } = await import('@kernelkit/cpu');
    const { runBench } = await import('../src/run.js');
    const unused = async (): Promise<never> => {
      throw new Error('only the cpu backend runs in this test');
    };
    const loaders = { cpu: async () => createCpuBackend(), piscina: unused, webgpu: unused, gpujs: unused };
    const r = await runBench({ workload: 'tiny', ops: ['scan'], cases: ['scan-10k-u32'], backends: ['kernelkit'], progress: false, floor: false }, { loaders });
    const row = r.rows.find((x) => x.backend === 'kernelkit');
    expect(row?.status === 'ok' && row.routedTo).toBe(`cpu/${createCpuBackend().variants('scan')[0]}`);
  }, 120_000);
});

describe("the kernelkit row's timed calls", () => {
  it('names the route most of them took and lists every route when they split', () => {
    expect(routeSummary(new Map())).toEqual({});
    expect(routeSummary(new Map([['webgpu/auto', 9]]))).toEqual({ routedTo: 'webgpu/auto' });
    expect(routeSummary(new Map([['webgpu/decoupled', 3], ['piscina/wasm-simd', 5]]))).toEqual({
      routedTo: 'piscina/wasm-simd',
      note: "the timed calls (and tinybench's warm-up) ran on piscina/wasm-simd (5), webgpu/decoupled (3)",
    });
  });
});

describe('warm-up until results reuse memory', () => {
  /** A contender whose every call returns an array of `bytes`. */
  const returning = (bytes: number) => standIn('cpu', () => ({ data: new Float32Array(bytes / 4) }));

  it('makes a collection’s worth of calls and three more for a result of 1 MiB or more, none below it or for a non-array', async () => {
    const big = returning(2 ** 22);
    const result = new Uint8Array(2 ** 22);
    // Read in the same synchronous stretch as the warm-up reads it: the bound follows the heap in use, which the calls move.
    const expected = Math.floor(resultsHeldBetweenCollections() / 2 ** 22) + 3;
    await warmUntilResultsReused(big, 'scan', args, {}, result, 60_000);
    expect(big.calls).toBe(expected);
    const small = returning(RESULT_MIN_BYTES - 1);
    await warmUntilResultsReused(small, 'scan', args, {}, new Uint8Array(RESULT_MIN_BYTES - 1), 60_000);
    await warmUntilResultsReused(small, 'gridSearch', args, {}, { count: 3 }, 60_000);
    expect(small.calls).toBe(0);
  });

  it('stops after three times the row budget', async () => {
    const slow = standIn('cpu', async () => (await new Promise((r) => setTimeout(r, 20)), { data: new Float32Array(1) }));
    await warmUntilResultsReused(slow, 'scan', args, {}, new Uint8Array(2 ** 20), 30);
    expect(slow.calls).toBeLessThanOrEqual(6);
  });
});
