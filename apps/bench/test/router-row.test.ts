import { describe, expect, it } from 'vitest';
import { makeScanArgs, type OpArgs, type OpName } from '@kernelkit/ops';
import { TRIAL_MAX_CALLS } from 'kernelkit';
import type { CallOutput, Contender } from '../src/backends.js';
import { settleRouter } from '../src/run.js';

/** A router stand-in whose calls report the given routes in turn (the last one repeats). */
function scripted(routes: readonly NonNullable<CallOutput['route']>[]): Contender & { calls: number } {
  const c = {
    name: 'kernelkit' as const,
    info: { description: 'scripted', software: false },
    disposed: false,
    calls: 0,
    variants: () => ['routed'],
    call: async () => ({ data: new Uint32Array(1), route: routes[Math.min(c.calls++, routes.length - 1)] }),
    dispose: async () => {},
  };
  return c;
}

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

  it('stops at 1 + TRIAL_MAX_CALLS calls per candidate (warm-up and the longest trial), as many for each of a close race, and two more when the route never settles', async () => {
    const b = scripted([{ settled: false, candidates: 3 }]);
    const most = (1 + TRIAL_MAX_CALLS) * (3 + 2) + 2;
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
