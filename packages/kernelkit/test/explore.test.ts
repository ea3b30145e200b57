import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError, RESULT_MIN_BYTES } from '@kernelkit/core';
import { createCpuBackend } from '@kernelkit/cpu';
import { OPS, OP_NAMES, makeConv2dArgs, makeScanArgs, makeStencil3dArgs, type BackendName, type DeviceArray, type OpName } from '@kernelkit/ops';
import { createKernels, type CreateKernelsOptions } from '../src/kernels.js';
import type { BackendLoaders } from '../src/loaders.js';
import { CALIBRATION_FORMAT_VERSION, machineIdentity, machineKey, readCalibrationCache } from '../src/router/cache.js';
import type { BackendCost, CostModel, TimeFit } from '../src/router/cost-model.js';
import { formatRoute } from '../src/router/router.js';
import { callShape } from '../src/router/call-shape.js';
import { routingKey, warmedUp, warmUpCalls, WARM_UP_MAX_MS } from '../src/router/explore.js';
import { fakeLoaders } from './fakes.js';

const noEnv = {};
/** Most tests below follow trials of one timed call each and the factor 4 (the defaults: 2 calls and more up to 250 ms, and 8). */
const ONE = { factor: 4, trialCalls: 1, trialMinMs: 0 };

const tmp = (): string => join(mkdtempSync(join(tmpdir(), 'kk-explore-')), 'calibration.json');
const CPU_VARIANTS = Object.fromEntries(OP_NAMES.map((op) => [op, createCpuBackend().variants(op)])) as Record<OpName, readonly string[]>;
/** The fake backends also offer an `auto` variant (it runs their default), as WebGPU does for the convolutions. */
const WITH_AUTO = Object.fromEntries(OP_NAMES.map((op) => [op, [...CPU_VARIANTS[op], 'auto']])) as unknown as Record<OpName, readonly string[]>;

/** A backend cost predicting `fit` for every op's default variant (so `auto` is predicted the same, as a stand-in). */
function cost(key: string, fit: Partial<TimeFit>, extra: Partial<BackendCost> = {}): BackendCost {
  const f: TimeFit = { fixedMs: 0, msPerWork: 0, msPerPass: 0, ...fit };
  const ops = Object.fromEntries(OP_NAMES.map((op) => [op, { [CPU_VARIANTS[op][0]!]: { fit: f, samples: [] } }]));
  return { key, description: key, software: false, startMs: 0, upload: { fixedMs: 0, msPerByte: 0 }, download: { fixedMs: 0, msPerByte: 0 }, variants: CPU_VARIANTS, ops, ...extra };
}

/**
 * Virtual ms of `performance.now()`: a fake call's delay moves it on instead of sleeping. Real time
 * still moves it, slowed a thousandfold, so that a stall of the test process (a collection, a
 * busy machine) cannot stretch the times the router measures.
 */
let clockOffset = 0;
const REAL_TIME_SCALE = 1e-3;

/**
 * Fake backends (the CPU backend under other names) whose calls take `delays[backend/variant]`
 * virtual ms on top of their real (tiny) work, or `delays(backend/variant, the call before's)`,
 * so measured times are the test's to choose. `runs` logs every call as `backend/variant`.
 */
function timedLoaders(delays: Readonly<Record<string, number>> | ((name: string, previous: string | undefined) => number)): { loaders: BackendLoaders; runs: string[] } {
  const { loaders } = fakeLoaders({ webgpu: { ok: true }, piscina: { ok: true }, cpu: { ok: true } }, { available: true, software: false });
  const runs: string[] = [];
  const timed = (name: BackendName): BackendLoaders[BackendName] => async (o) => {
    const b = await loaders[name](o);
    const ops = b as unknown as Record<OpName, (a: unknown, o?: Record<string, unknown>) => Promise<unknown>>;
    for (const op of OP_NAMES) {
      const inner = ops[op];
      ops[op] = async (a: unknown, opts?: Record<string, unknown>) => {
        const v = (opts?.['variant'] as string | undefined) ?? CPU_VARIANTS[op][0]!;
        clockOffset += typeof delays === 'function' ? delays(`${name}/${v}`, runs.at(-1)) : delays[`${name}/${v}`] ?? 0;
        runs.push(`${name}/${v}`);
        return inner(a, v === 'auto' ? { ...opts, variant: undefined } : opts);
      };
    }
    (b as { variants: (op: OpName) => readonly string[] }).variants = (op) => WITH_AUTO[op];
    return b;
  };
  return { loaders: { ...loaders, webgpu: timed('webgpu'), piscina: timed('piscina'), cpu: timed('cpu') }, runs };
}

// Predictions (fixed ms, any size): cpu 10, piscina 20, webgpu 400.
const MODEL: CostModel = {
  backends: { cpu: cost('cpu', { fixedMs: 10 }), piscina: cost('piscina/default threads', { fixedMs: 20 }), webgpu: cost('webgpu/adapter', { fixedMs: 400 }) },
};
// Measured (the fakes run the CPU backend's variants): cpu 40, piscina 5; webgpu would be 1 but is predicted beyond 4 × the best measured.
const DELAYS = { 'cpu/wasm-simd': 40, 'piscina/wasm-simd': 5, 'webgpu/wasm-simd': 1 };

const scanArgs = makeScanArgs({ n: 1000, dtype: 'u32' });

/** Close-race tests: predictions cpu 100 (never tried under factor 4), piscina and webgpu as given. */
const raceModel = (piscinaMs: number, webgpuMs: number): CostModel => ({
  backends: { cpu: cost('cpu', { fixedMs: 100 }), piscina: cost('piscina/default threads', { fixedMs: piscinaMs }), webgpu: cost('webgpu/adapter', { fixedMs: webgpuMs }) },
});
/** Two timed calls per trial, a turn per call: each candidate's second trial call comes right after the other's. */
const RACE = { factor: 4, trialCalls: 2, trialMinMs: 0, trialRunMs: 0 };
/** webgpu: 8 ms back to back, 14 ms right after another backend's call (its clocks fell); piscina 10 ms always. */
const webgpuSlowAfterOther = (name: string, previous: string | undefined): number => (name.startsWith('webgpu') ? (previous === undefined || previous === name ? 8 : 14) : 10);

async function calls(k: Awaited<ReturnType<typeof createKernels>>, n: number) {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await k.scan(scanArgs)).route);
  return out;
}

describe('measured choice (exploration)', () => {
  beforeEach(() => {
    const realNow = performance.now.bind(performance);
    vi.spyOn(performance, 'now').mockImplementation(() => realNow() * REAL_TIME_SCALE + clockOffset);
  });

  afterEach(() => {
    vi.restoreAllMocks();
    process.removeAllListeners('warning');
  });

  it('tries the candidates predicted near the best, one timed call each after a warm-up, and settles on the fastest measured', async () => {
    const { loaders, runs } = timedLoaders(DELAYS);
    const k = await createKernels({ costModel: MODEL, explore: ONE }, loaders, noEnv);
    const routes = await calls(k, 6);
    expect(routes.map((r) => `${r.choice} ${r.backend}`)).toEqual(['warm-up cpu', 'trial cpu', 'warm-up piscina', 'trial piscina', 'measured piscina', 'measured piscina']);
    expect(routes.slice(0, 4).every((r) => !r.settled)).toBe(true);
    const settled = routes[4]!;
    expect(settled).toMatchObject({ settled: true, candidates: 3, runnerUp: { backend: 'cpu', variant: 'wasm-simd' } });
    expect(settled.measuredMs).toBeLessThan(settled.runnerUp!.measuredMs!);
    expect(Object.keys(settled.trials ?? {}).sort()).toEqual(['cpu/wasm-simd', 'piscina/wasm-simd']);
    // webgpu, predicted 400 ms against 4 × the best measured (40 ms, then 5), never ran: not even as the default backend.
    expect(runs.filter((r) => r.startsWith('webgpu'))).toEqual([]);
    const note = (await k.scan(scanArgs)).notes?.[0];
    expect(note).toMatch(/^routed to piscina\/wasm-simd: measured \d+\.\d ms \(1 call\) over 2 trials, runner-up cpu\/wasm-simd \d+\.\d ms \(1 call\)$/);
    await k.dispose();
  });

  it('gives software WebGPU a trial only when it is predicted faster than every other candidate (its buffer mapping slows this process)', async () => {
    const software = (webgpuMs: number): CostModel => ({
      backends: { ...MODEL.backends, webgpu: cost('webgpu/adapter', { fixedMs: webgpuMs }, { software: true }) },
    });
    // Predicted 15 ms, between cpu (10) and piscina (20): hardware WebGPU would get a trial, software does not.
    const slower = timedLoaders(DELAYS);
    const k = await createKernels({ costModel: software(15), explore: ONE }, slower.loaders, noEnv);
    const routes = await calls(k, 6);
    expect(routes.at(-1)).toMatchObject({ settled: true, backend: 'piscina' });
    expect(slower.runs.filter((r) => r.startsWith('webgpu'))).toEqual([]);
    await k.dispose();
    const hardware = timedLoaders(DELAYS);
    const kh = await createKernels({ costModel: { backends: { ...MODEL.backends, webgpu: cost('webgpu/adapter', { fixedMs: 15 }) } }, explore: ONE }, hardware.loaders, noEnv);
    await calls(kh, 8);
    expect(hardware.runs.filter((r) => r.startsWith('webgpu')).length).toBeGreaterThan(0);
    await kh.dispose();
    // Predicted fastest (5 ms): software WebGPU is tried, and wins on its measured 1 ms.
    const faster = timedLoaders(DELAYS);
    const kf = await createKernels({ costModel: software(5), explore: ONE }, faster.loaders, noEnv);
    const fast = await calls(kf, 8);
    expect(fast.at(-1)).toMatchObject({ settled: true, backend: 'webgpu' });
    await kf.dispose();
  });

  it('a close race is run again back to back before the key settles: a backend slow only right after another wins it', async () => {
    const { loaders, runs } = timedLoaders(webgpuSlowAfterOther);
    const k = await createKernels({ costModel: raceModel(10, 9), explore: RACE }, loaders, noEnv);
    const routes = await calls(k, 19);
    // Interleaved, webgpu's second trial call came right after piscina's: 14 ms against piscina's 10.
    // Back to back the sides alternate in blocks of a trial's calls (blockComplete), each block after the first woken by an untimed call.
    expect(routes.map((r) => `${r.choice} ${r.backend}`)).toEqual([
      'warm-up webgpu', 'trial webgpu', 'warm-up piscina', 'trial piscina', 'trial webgpu', 'trial piscina',
      ...Array<string>(2).fill('confirm piscina'), ...Array<string>(3).fill('rematch webgpu'),
      ...Array<string>(3).fill('confirm piscina'), ...Array<string>(3).fill('rematch webgpu'), 'measured webgpu', 'measured webgpu',
    ]);
    expect(routes.slice(0, -2).every((r) => !r.settled)).toBe(true);
    // A rematch block's first call wakes webgpu, untimed; its timed calls run back to back.
    expect(routes[8]!.measuredMs).toBeUndefined();
    expect(formatRoute(routes[8]!)).toBe('routed to webgpu/wasm-simd: rematch of a close race, untimed wake-up call');
    expect(formatRoute(routes[9]!)).toMatch(/^routed to webgpu\/wasm-simd: rematch of a close race, call 1 back to back, measured \d+\.\d ms$/);
    expect(formatRoute(routes[11]!)).toBe('routed to piscina/wasm-simd: confirming a close race, untimed wake-up call');
    expect(formatRoute(routes[16]!)).toMatch(/^routed to webgpu\/wasm-simd: rematch of a close race, call 4 back to back, measured \d+\.\d ms$/);
    expect(formatRoute(routes[6]!)).toMatch(/^routed to piscina\/wasm-simd: confirming a close race, call 1 back to back, measured \d+\.\d ms$/);
    const settled = routes.at(-1)!;
    expect(settled).toMatchObject({ settled: true, runnerUp: { backend: 'piscina' } });
    // The settled trials are the back-to-back times: webgpu about 8 ms, piscina about 10.
    expect(settled.trials!['webgpu/wasm-simd']).toBeLessThan(settled.trials!['piscina/wasm-simd']!);
    expect(settled.trialCalls).toEqual({ 'webgpu/wasm-simd': 4, 'piscina/wasm-simd': 4 });
    expect(runs.slice(-2)).toEqual(['webgpu/wasm-simd', 'webgpu/wasm-simd']);
    await k.dispose();

    // closeRace: 1 turns the second race off: the interleaved trials decide.
    const off = timedLoaders(webgpuSlowAfterOther);
    const k1 = await createKernels({ costModel: raceModel(10, 9), explore: { ...RACE, closeRace: 1 } }, off.loaders, noEnv);
    expect((await calls(k1, 7)).map((r) => `${r.choice} ${r.backend}`).slice(-1)).toEqual(['measured piscina']);
    await k1.dispose();
  });

  it("warms a candidate up (Backend.warmUp) before each run of its timed calls, so a GPU's lowered clocks do not lose it the race", async () => {
    // webgpu: 8 ms right after its own call or its warm-up, 14 after another backend's call.
    const clocks = (name: string, previous: string | undefined): number =>
      name.startsWith('webgpu') ? (previous === undefined || previous.startsWith('webgpu') ? 8 : 14) : 10;
    const { loaders, runs } = timedLoaders(clocks);
    const warmed: BackendLoaders = {
      ...loaders,
      webgpu: async (o) => Object.assign(await loaders.webgpu(o), { warmUp: async () => void runs.push('webgpu/warm-up') }),
    };
    // closeRace: 1: the interleaved trials decide (without the warm-up piscina wins them, as above).
    const k = await createKernels({ costModel: raceModel(10, 9), explore: { ...RACE, closeRace: 1 } }, warmed, noEnv);
    const routes = await calls(k, 9);
    expect(routes.map((r) => `${r.choice} ${r.backend}`)).toEqual([
      'warm-up webgpu', 'trial webgpu', 'warm-up piscina', 'trial piscina', 'trial webgpu', 'trial piscina', 'measured webgpu', 'measured webgpu', 'measured webgpu',
    ]);
    // Before each of webgpu's timed turns (its first trial call after its untimed warm-up call, and after piscina's): none before settled calls.
    expect(runs).toEqual([
      'webgpu/wasm-simd', 'webgpu/warm-up', 'webgpu/wasm-simd', 'piscina/wasm-simd', 'piscina/wasm-simd', 'webgpu/warm-up', 'webgpu/wasm-simd', 'piscina/wasm-simd',
      'webgpu/wasm-simd', 'webgpu/wasm-simd', 'webgpu/wasm-simd',
    ]);
    expect(routes.at(-1)!.trials!['webgpu/wasm-simd']).toBeLessThan(routes.at(-1)!.trials!['piscina/wasm-simd']!);
    await k.dispose();

    // A warm-up that fails (a lost device) fails no call: the call reports its own outcome.
    const failing: BackendLoaders = {
      ...loaders,
      webgpu: async (o) => Object.assign(await loaders.webgpu(o), { warmUp: () => Promise.reject(new Error('device lost')) }),
    };
    const k2 = await createKernels({ costModel: raceModel(10, 9), explore: { ...RACE, closeRace: 1 } }, failing, noEnv);
    expect((await calls(k2, 9)).every((r) => r.backend === 'webgpu' || r.backend === 'piscina')).toBe(true);
    await k2.dispose();
  });

  it('concurrent calls during a close race all complete, and the key settles', async () => {
    const { loaders } = timedLoaders(webgpuSlowAfterOther);
    const k = await createKernels({ costModel: raceModel(10, 9), explore: RACE }, loaders, noEnv);
    const first = await calls(k, 7);
    expect(first.at(-1)!.choice).toBe('confirm');
    const together = await Promise.all(Array.from({ length: 8 }, () => k.scan(scanArgs)));
    expect(together.every((r) => r.data.length === 1000)).toBe(true);
    const after = await calls(k, 12);
    expect(after.at(-1)!.settled).toBe(true);
    for (const r of [...first, ...together.map((t) => t.route), ...after]) expect(r.reason).not.toContain('undefined');
    await k.dispose();
  });

  it('a close race whose winner runs back to back well clear of the runner-up settles on it without a rematch', async () => {
    // piscina 10 ms in its trial (interleaved) but 5 back to back; webgpu 12 always: within 1.5x of 10, not of 5.
    const delay = (name: string, previous: string | undefined): number => (name.startsWith('piscina') ? (previous === name ? 5 : 10) : 12);
    const { loaders } = timedLoaders(delay);
    const k = await createKernels({ costModel: raceModel(9, 10), explore: RACE }, loaders, noEnv);
    const routes = await calls(k, 10);
    expect(routes.map((r) => `${r.choice} ${r.backend}`)).toEqual([
      'warm-up piscina', 'trial piscina', 'warm-up webgpu', 'trial webgpu', 'trial piscina', 'trial webgpu',
      ...Array<string>(2).fill('confirm piscina'), 'measured piscina', 'measured piscina',
    ]);
    await k.dispose();
  });

  it("a close race read from the cache is run again once in the next process, each side's time merged with the cached one", async () => {
    const path = tmp();
    const model: CostModel = { backends: { cpu: cost('cpu', { fixedMs: 10 }), piscina: cost('piscina/default threads', { fixedMs: 100 }), webgpu: cost('webgpu/adapter', { fixedMs: 9 }) } };
    const steady = (cpuMs: number, webgpuMs: number) => (name: string): number => (name.startsWith('cpu') ? cpuMs : name.startsWith('webgpu') ? webgpuMs : 100);
    const first = timedLoaders(steady(8, 10));
    const k1 = await createKernels({ costModel: model, calibrationCache: path, explore: RACE }, first.loaders, noEnv);
    expect((await calls(k1, 18)).at(-1)).toMatchObject({ choice: 'measured', backend: 'cpu', runnerUp: { backend: 'webgpu' } });
    await k1.dispose();
    const cachedBackend = async (): Promise<string | undefined> =>
      Object.values((await readCalibrationCache(path)).file.machines[machineKey(machineIdentity())]?.choices ?? {}).flatMap((set) => Object.values(set)).map((c) => c.backend)[0];
    await vi.waitFor(async () => expect(await cachedBackend()).toBe('cpu'));

    // This process runs cpu at 11 ms and webgpu at 10: alone it would pick webgpu; merged with the
    // cached 8 and 10 (about 9.4 against 10) cpu keeps the key.
    const second = timedLoaders(steady(11, 10));
    const k2 = await createKernels({ costModel: model, calibrationCache: path, explore: RACE }, second.loaders, noEnv);
    const routes = await calls(k2, 15);
    expect(routes.map((r) => `${r.choice} ${r.backend}`)).toEqual([
      'warm-up cpu', ...Array<string>(2).fill('confirm cpu'), 'warm-up webgpu', ...Array<string>(3).fill('rematch webgpu'),
      ...Array<string>(3).fill('confirm cpu'), ...Array<string>(3).fill('rematch webgpu'), 'measured cpu', 'measured cpu',
    ]);
    expect(formatRoute(routes[0]!)).toMatch(/^routed to cpu\/wasm-simd: warm-up before its close race is run again/);
    expect(routes[1]!.reason).toContain('a measured choice from the cache, run again in this process');
    const settled = routes.at(-1)!;
    expect(settled.trials!['cpu/wasm-simd']).toBeGreaterThan(8.5);
    expect(settled.trials!['cpu/wasm-simd']).toBeLessThan(settled.trials!['webgpu/wasm-simd']!);
    // The process's calls and the cached trial's count together.
    expect(settled.trialCalls!['cpu/wasm-simd']).toBeGreaterThan(4);
    expect(formatRoute(settled)).not.toContain('from the cache');
    await k2.dispose();

    // Here webgpu runs at 8 and cpu at 20: merged (about 8.9 against 12.5), webgpu takes the key, and the file says so.
    const third = timedLoaders(steady(20, 8));
    const k3 = await createKernels({ costModel: model, calibrationCache: path, explore: RACE }, third.loaders, noEnv);
    expect((await calls(k3, 15)).at(-1)).toMatchObject({ choice: 'measured', backend: 'webgpu', runnerUp: { backend: 'cpu' } });
    await k3.dispose();
    await vi.waitFor(async () => expect(await cachedBackend()).toBe('webgpu'));
  });

  it('once every key has settled, backends no key runs on are released; a later key starts one again', async () => {
    const { loaders, runs } = timedLoaders(DELAYS);
    const disposed: string[] = [];
    const counted = Object.fromEntries(
      Object.entries(loaders).map(([name, load]) => [name, async (o: never) => {
        const b = await (load as (o: never) => Promise<{ dispose(): Promise<void> }>)(o);
        const inner = b.dispose.bind(b);
        b.dispose = async () => { disposed.push(name); await inner(); };
        return b;
      }]),
    ) as unknown as BackendLoaders;
    const k = await createKernels({ costModel: MODEL, explore: ONE }, counted, noEnv);
    // The default backend the facade starts with these fakes is piscina.
    expect(await k.started()).toEqual(['piscina']);
    const routes = await calls(k, 5);
    expect(routes.map((r) => `${r.choice} ${r.backend}`)).toEqual(['warm-up cpu', 'trial cpu', 'warm-up piscina', 'trial piscina', 'measured piscina']);
    // cpu was tried and lost: released once the key settled.
    expect(await k.started()).toEqual(['piscina']);
    expect(disposed).toEqual(['cpu']);
    // Another size explores again and starts cpu anew.
    const before = runs.length;
    const other = await k.scan(makeScanArgs({ n: 100_000, dtype: 'u32' }));
    expect(other.route).toMatchObject({ choice: 'warm-up', backend: 'cpu' });
    expect(runs.length).toBe(before + 1);
    await k.dispose();
  });

  it('by default a long call gets a few timed calls, a short one more, until they add up to 250 ms; the candidates take turns', async () => {
    const { loaders } = timedLoaders(DELAYS);
    // Factor 16: cpu's 40 ms calls, 8 times piscina's, are then not hopeless (webgpu, predicted 400, still gets no trial).
    const k = await createKernels({ costModel: MODEL, explore: { factor: 16 } }, loaders, noEnv);
    const routes = [];
    do routes.push((await k.scan(scanArgs)).route);
    while (!routes.at(-1)!.settled && routes.length < 80);
    const steps = routes.map((r) => `${r.choice} ${r.backend}`);
    // Turns of calls adding up to 50 ms: cpu (40 ms a call) two calls, piscina (a little over 5 ms) ten.
    // cpu's seventh call passes 250 ms; piscina stops at 40 calls (TRIAL_MAX_CALLS).
    const turn = (backend: string, n: number): string[] => Array.from({ length: n }, () => `trial ${backend}`);
    expect(steps.slice(0, -1)).toEqual([
      'warm-up cpu', ...turn('cpu', 2), 'warm-up piscina', ...turn('piscina', 10),
      ...turn('cpu', 2), ...turn('piscina', 10), ...turn('cpu', 2), ...turn('piscina', 10), ...turn('cpu', 1), ...turn('piscina', 10),
    ]);
    expect(steps.at(-1)).toBe('measured piscina');
    const settled = routes.at(-1)!;
    expect(settled.trialCalls!['cpu/wasm-simd']).toBe(7);
    // Each piscina call takes a little over 5 ms: fifty would pass 250 ms, so TRIAL_MAX_CALLS (40) ends the trial.
    const piscinaCalls = settled.trialCalls!['piscina/wasm-simd']!;
    expect(piscinaCalls).toBe(40);
    expect(routes.filter((r) => r.choice === 'trial' && r.backend === 'piscina')).toHaveLength(piscinaCalls);
    // The trial notes count the calls; the settled note gives each trial's.
    expect(routes[5]!.trialCalls!['piscina/wasm-simd']).toBe(2);
    expect(formatRoute(routes[5]!)).toMatch(/^routed to piscina\/wasm-simd: trial call 2, measured \d+\.\d ms, predicted 20\.0 ms \(exploring 3 candidates, 2 measured\)$/);
    expect(formatRoute(settled)).toMatch(new RegExp(`^routed to piscina/wasm-simd: measured \\d+\\.\\d ms \\(${piscinaCalls} calls\\) over 2 trials, runner-up cpu/wasm-simd \\d+\\.\\d ms \\(7 calls\\)$`));
    await k.dispose();
  });

  it("ends a trial after one timed call when it and the candidate's warm-up both took over `factor` times the best measured", async () => {
    const { loaders, runs } = timedLoaders(DELAYS);
    // A turn per call: cpu (40 ms) has one timed call when piscina (5 ms) has measured; 40 > 4 × 5.
    const k = await createKernels({ costModel: MODEL, explore: { factor: 4, trialRunMs: 0 } }, loaders, noEnv);
    const routes = [];
    do routes.push((await k.scan(scanArgs)).route);
    while (!routes.at(-1)!.settled && routes.length < 80);
    expect(routes.slice(0, 4).map((r) => `${r.choice} ${r.backend}`)).toEqual(['warm-up cpu', 'trial cpu', 'warm-up piscina', 'trial piscina']);
    expect(routes.at(-1)).toMatchObject({ choice: 'measured', backend: 'piscina', trialCalls: { 'cpu/wasm-simd': 1 } });
    expect(runs.filter((r) => r.startsWith('cpu/'))).toHaveLength(2);
    await k.dispose();
  });

  it('trialMaxCalls caps a trial whose calls never add up to trialMinMs', async () => {
    const { loaders } = timedLoaders({ 'cpu/wasm-simd': 8, 'piscina/wasm-simd': 1 });
    const k = await createKernels({ costModel: MODEL, explore: { factor: 4, trialMinMs: 60_000, trialCalls: 2, trialMaxCalls: 3 } }, loaders, noEnv);
    const routes = await calls(k, 9);
    expect(routes.map((r) => `${r.choice} ${r.backend}`)).toEqual([
      'warm-up cpu', 'trial cpu', 'trial cpu', 'trial cpu', 'warm-up piscina', 'trial piscina', 'trial piscina', 'trial piscina', 'measured piscina',
    ]);
    expect(routes[8]!.trialCalls).toEqual({ 'cpu/wasm-simd': 3, 'piscina/wasm-simd': 3 });
    await k.dispose();
  });

  it('gives no trial to a candidate predicted over trialMaxMs, and keeps separate keys for other sizes', async () => {
    const { loaders, runs } = timedLoaders(DELAYS);
    const k = await createKernels({ costModel: MODEL, explore: { ...ONE, trialMaxMs: 15 } }, loaders, noEnv);
    const routes = await calls(k, 3);
    expect(routes.map((r) => `${r.choice} ${r.backend}`)).toEqual(['warm-up cpu', 'trial cpu', 'measured cpu']);
    expect(runs.some((r) => r.startsWith('piscina'))).toBe(false);
    // Another size band is another key, with its own warm-up: a first call at a new size allocates.
    const big = await k.scan(makeScanArgs({ n: 100_000, dtype: 'u32' }));
    expect(big.route).toMatchObject({ choice: 'warm-up', backend: 'cpu' });
    expect(big.route.key).not.toBe(routes[2]!.key);
    await k.dispose();
  });

  it('warms a candidate up until its host results reuse memory (or for WARM_UP_MAX_MS), and once when the caller passes out', async () => {
    // A 1 MiB result: the backends hand out fresh memory until callers hold resultsHeldBetweenCollections()
    // (64 MiB at least), so the warm-up would take over 60 calls; at 700 virtual ms a call the time bound (2 s) ends it after three.
    const bigArgs = makeScanArgs({ n: 2 ** 18, dtype: 'f32' });
    const { loaders } = timedLoaders({ 'cpu/wasm-simd': 700, 'piscina/wasm-simd': 700 });
    const k = await createKernels({ costModel: MODEL, explore: ONE }, loaders, noEnv);
    const routes = [];
    for (let i = 0; i < 5; i++) routes.push((await k.scan(bigArgs)).route);
    expect(routes.map((r) => `${r.choice} ${r.backend}`)).toEqual(['warm-up cpu', 'warm-up cpu', 'warm-up cpu', 'trial cpu', 'warm-up piscina']);
    expect(formatRoute(routes[1]!)).toMatch(/warm-up before its trial/);
    // With the caller's out there is no fresh result memory: one warm-up (same key, so in new kernels).
    await k.dispose();
    const again = timedLoaders({ 'cpu/wasm-simd': 700, 'piscina/wasm-simd': 700 });
    const withOut = await createKernels({ costModel: MODEL, explore: ONE }, again.loaders, noEnv);
    const out = new Float32Array(2 ** 18);
    const first = [];
    for (let i = 0; i < 2; i++) first.push((await withOut.scan(bigArgs, { out })).route.choice);
    expect(first).toEqual(['warm-up', 'trial']);
    await withOut.dispose();
  });

  it('scales the predictions it holds against measured times by how far the measured candidates ran from theirs', async () => {
    // Predicted piscina 50, cpu 150 (every prediction 10x high, as calibration calls paying fresh
    // result memory give); measured piscina 5, cpu 3. Unscaled, cpu (150 > 4 × 5) would never be tried.
    const high: CostModel = { backends: { cpu: cost('cpu', { fixedMs: 150 }), piscina: cost('piscina/default threads', { fixedMs: 50 }) } };
    const { loaders } = timedLoaders({ 'cpu/wasm-simd': 3, 'piscina/wasm-simd': 5 });
    const k = await createKernels({ costModel: high, explore: ONE }, loaders, noEnv);
    const routes = await calls(k, 5);
    expect(routes.map((r) => `${r.choice} ${r.backend}`)).toEqual(['warm-up piscina', 'trial piscina', 'warm-up cpu', 'trial cpu', 'measured cpu']);
    await k.dispose();
  });

  it('counts warm-up calls by the result size: one below RESULT_MIN_BYTES or with out or a device output, else until a collection hands results back', () => {
    const held = 64 * 2 ** 20;
    expect(warmUpCalls({ output: 'array', outputBytes: RESULT_MIN_BYTES - 4 }, false, held)).toBe(1);
    expect(warmUpCalls({ output: 'array', outputBytes: 2 ** 22 }, true, held)).toBe(1);
    expect(warmUpCalls({ output: 'device', outputBytes: 2 ** 22 }, false, held)).toBe(1);
    expect(warmUpCalls({ output: 'array', outputBytes: 2 ** 22 }, false, held)).toBe(16 + 3);
    expect(warmUpCalls({ output: 'array', outputBytes: 2 ** 28 }, false, held)).toBe(3);
    expect(warmedUp(undefined, 1)).toBe(false);
    expect(warmedUp({ calls: 1, ms: 2 }, 1)).toBe(true);
    expect(warmedUp({ calls: 5, ms: 100 }, 19)).toBe(false);
    expect(warmedUp({ calls: 5, ms: WARM_UP_MAX_MS }, 19)).toBe(true);
  });

  it("leaves a backend's start-up out of the factor (paid once) but not out of the trial bound", async () => {
    const model: CostModel = { backends: { ...MODEL.backends, piscina: cost('piscina/default threads', { fixedMs: 20 }, { startMs: 100 }) } };
    for (const [trialMaxMs, expected] of [
      [2000, ['warm-up cpu', 'trial cpu', 'warm-up piscina', 'trial piscina', 'measured piscina']],
      [50, ['warm-up cpu', 'trial cpu', 'measured cpu']],
    ] as const) {
      const { loaders } = timedLoaders(DELAYS);
      const k = await createKernels({ costModel: model, explore: { ...ONE, trialMaxMs } }, loaders, noEnv);
      expect((await calls(k, expected.length)).map((r) => `${r.choice} ${r.backend}`)).toEqual(expected);
      await k.dispose();
    }
  });

  it('explores the variants of one backend: its measured default and its auto', async () => {
    // Only webgpu is predicted near: its default (wasm-simd, measured) and auto (predicted by the default's fit).
    const model: CostModel = {
      backends: {
        webgpu: cost('webgpu/adapter', { fixedMs: 10 }, { variants: WITH_AUTO }),
        piscina: cost('piscina/default threads', { fixedMs: 500 }),
        cpu: cost('cpu', { fixedMs: 900 }),
      },
    };
    const { loaders, runs } = timedLoaders({ 'webgpu/wasm-simd': 30, 'webgpu/auto': 2 });
    const k = await createKernels({ costModel: model, explore: ONE }, loaders, noEnv);
    const args = makeConv2dArgs({ batch: 1, height: 16, width: 16, k: 3 });
    const routes = [];
    for (let i = 0; i < 5; i++) routes.push((await k.conv2d(args)).route);
    expect(routes.map((r) => `${r.choice} ${r.backend}/${r.variant}`)).toEqual([
      'warm-up webgpu/wasm-simd', 'trial webgpu/wasm-simd', 'warm-up webgpu/auto', 'trial webgpu/auto', 'measured webgpu/auto',
    ]);
    // 'direct' was neither measured by calibration nor the backend's auto: not a candidate.
    expect(runs).not.toContain('webgpu/direct');
    await k.dispose();
  });

  it('saves settled choices in the cache and the next process uses them without trials', async () => {
    const path = tmp();
    const first = timedLoaders(DELAYS);
    const k = await createKernels({ costModel: MODEL, calibrationCache: path, explore: ONE }, first.loaders, noEnv);
    await calls(k, 5);
    await k.dispose();
    const file = JSON.parse(readFileSync(path, 'utf8')) as { version: number; machines: Record<string, { choices: Record<string, Record<string, { backend: string }>> }> };
    expect(file.version).toBe(CALIBRATION_FORMAT_VERSION);
    const choices = Object.values(file.machines[machineKey(machineIdentity())]!.choices)[0]!;
    expect(Object.values(choices).map((c) => c.backend)).toEqual(['piscina']);
    // A trial is kept as its time, work and calls (not each call's time).
    expect(Object.values(choices)[0]).toMatchObject({ trials: { 'piscina/wasm-simd': { calls: 1 }, 'cpu/wasm-simd': { calls: 1 } } });
    expect(Object.keys((Object.values(choices)[0] as unknown as { trials: Record<string, object> }).trials['piscina/wasm-simd']!).sort()).toEqual(['calls', 'ms', 'work']);

    const second = timedLoaders(DELAYS);
    const again = await createKernels({ costModel: MODEL, calibrationCache: path, explore: ONE }, second.loaders, noEnv);
    const r = await again.scan(scanArgs);
    expect(r.route).toMatchObject({ choice: 'measured', settled: true, backend: 'piscina' });
    expect(r.notes?.[0]).toMatch(/^routed to piscina\/wasm-simd: measured \d+\.\d ms \(1 call\) over 2 trials, runner-up cpu\/wasm-simd \d+\.\d ms \(1 call\) \(from the cache\)$/);
    expect(second.runs).toEqual(['piscina/wasm-simd']);
    await again.dispose();

    // Without a cache path an injected model keeps its choices in memory only.
    const third = timedLoaders(DELAYS);
    const fresh = await createKernels({ costModel: MODEL, explore: ONE }, third.loaders, noEnv);
    expect((await fresh.scan(scanArgs)).route.choice).toBe('warm-up');
    await fresh.dispose();
  });

  it('a worker pool measured faster by less than POOL_MARGIN loses, and the route says why', async () => {
    const { loaders } = timedLoaders({ 'cpu/wasm-simd': 40, 'piscina/wasm-simd': 38 });
    const k = await createKernels({ costModel: MODEL, explore: { ...ONE, closeRace: 1 } }, loaders, noEnv);
    const routes = await calls(k, 5);
    expect(routes[4]).toMatchObject({ choice: 'measured', backend: 'cpu', runnerUp: { backend: 'piscina' } });
    expect(routes[4]!.reason).toMatch(/worker pool's times under 100 ms count 1\.1×/);
    await k.dispose();
  });

  it('a trial that caught a stall (over RETRIAL_FACTOR times its prediction) is run again before the key settles, and the route says so', async () => {
    // Predicted: piscina 20, webgpu 15, cpu 100 (no trial). piscina's first two calls stall at 400 ms, then run at 5.
    let piscinaCalls = 0;
    const { loaders } = timedLoaders((name) => (name.startsWith('piscina') ? (++piscinaCalls <= 2 ? 400 : 5) : name.startsWith('webgpu') ? 12 : 100));
    const model: CostModel = { backends: { cpu: cost('cpu', { fixedMs: 100 }), piscina: cost('piscina/default threads', { fixedMs: 20 }), webgpu: cost('webgpu/adapter', { fixedMs: 15 }) } };
    const k = await createKernels({ costModel: model, explore: { ...ONE, closeRace: 1 } }, loaders, noEnv);
    const routes = await calls(k, 8);
    const again = routes.findIndex((r) => /^a trial run again: its first measured 400\.\d ms over 1 call, over 10× its predicted 20\.0 ms/.test(r.reason));
    expect(again).toBeGreaterThan(0);
    expect(routes[again]).toMatchObject({ backend: 'piscina', choice: 'trial', settled: false });
    const settled = routes.find((r) => r.settled);
    expect(settled).toMatchObject({ choice: 'measured', backend: 'piscina', runnerUp: { backend: 'webgpu' } });
    expect(settled!.measuredMs).toBeLessThan(12);
    await k.dispose();
  });

  it('a forced calibration drops the measured choices, in the file and in memory: the key explores again', async () => {
    const path = tmp();
    const { loaders } = timedLoaders(DELAYS);
    const k = await createKernels({ costModel: MODEL, calibrationCache: path, explore: ONE }, loaders, noEnv);
    const routes = await calls(k, 5);
    expect(routes[4]).toMatchObject({ choice: 'measured', backend: 'piscina' });
    const choicesIn = (): unknown => (JSON.parse(readFileSync(path, 'utf8')) as { machines: Record<string, { choices?: unknown }> }).machines[machineKey(machineIdentity())]?.choices;
    // The settled choice is written in the background.
    await vi.waitFor(() => expect(choicesIn()).toBeDefined());
    await k.calibrate({ ops: ['scan'], budgetMs: 500, force: true });
    expect(choicesIn()).toBeUndefined();
    expect((await k.scan(scanArgs)).route.choice).not.toBe('measured');
    await k.dispose();
  });

  it('a corrupt cache, or a malformed measured choice in it, is ignored with a warning and the key explores', async () => {
    const warnings: Error[] = [];
    process.on('warning', (w) => warnings.push(w));
    const corrupt = tmp();
    writeFileSync(corrupt, '{"version": 3, "machines": {');
    const bad = tmp();
    const set = 'cpu + piscina/default threads + webgpu/adapter';
    writeFileSync(bad, JSON.stringify({ version: CALIBRATION_FORMAT_VERSION, machines: { [machineKey(machineIdentity())]: { machine: machineIdentity(), backends: {}, choices: { [set]: { anything: { backend: 'nowhere', variant: 1, trials: {} } } } } } }));
    expect((await readCalibrationCache(bad)).note).toMatch(/ignored 1 malformed entry/);
    // A trial without its count of calls (as format 3 kept them) is malformed in this format.
    const uncounted = tmp();
    // Filed under the scan calls' key: were it read, they would go to cpu without exploring.
    const scanKey = routingKey(callShape('scan', OPS.scan.validate(scanArgs), 'array'), undefined);
    const oldChoice = { backend: 'cpu', variant: 'wasm-simd', trials: { 'cpu/wasm-simd': { ms: 1, work: 1000 } } };
    writeFileSync(uncounted, JSON.stringify({ version: CALIBRATION_FORMAT_VERSION, machines: { [machineKey(machineIdentity())]: { machine: machineIdentity(), backends: {}, choices: { [set]: { [scanKey]: oldChoice } } } } }));
    expect((await readCalibrationCache(uncounted)).note).toMatch(/ignored 1 malformed entry/);
    // A file of an earlier format (the grid search calibrated at other sizes) is re-measured, without a warning.
    const stale = tmp();
    writeFileSync(stale, JSON.stringify({ version: CALIBRATION_FORMAT_VERSION - 1, machines: { [machineKey(machineIdentity())]: { machine: machineIdentity(), backends: {}, choices: { [set]: { [scanKey]: oldChoice } } } } }));
    expect((await readCalibrationCache(stale)).note).toBe(`calibration cache ${stale} is format ${CALIBRATION_FORMAT_VERSION - 1}, this kernelkit writes ${CALIBRATION_FORMAT_VERSION}: re-measuring`);
    for (const path of [corrupt, bad, uncounted, stale]) {
      const { loaders } = timedLoaders(DELAYS);
      const k = await createKernels({ costModel: MODEL, calibrationCache: path, explore: ONE }, loaders, noEnv);
      expect((await calls(k, 5)).map((r) => r.choice)).toEqual(['warm-up', 'trial', 'warm-up', 'trial', 'measured']);
      await k.dispose();
    }
    await new Promise((r) => setImmediate(r));
    expect(warnings.filter((w) => w.message.includes(corrupt) || w.message.includes(bad)).length).toBeGreaterThanOrEqual(2);
    expect(warnings.filter((w) => w.message.includes(stale))).toEqual([]);
    // The corrupt file was replaced by a good one holding the new choice.
    expect(Object.keys((await readCalibrationCache(corrupt)).file.machines)).toHaveLength(1);
  });

  it('explore: false routes every call by prediction; bad explore options are refused by name', async () => {
    const { loaders, runs } = timedLoaders(DELAYS);
    const k = await createKernels({ costModel: MODEL, explore: false }, loaders, noEnv);
    const routes = await calls(k, 4);
    expect(routes.every((r) => r.choice === 'predicted' && r.settled && r.backend === 'cpu')).toBe(true);
    expect(runs).toEqual(['cpu/wasm-simd', 'cpu/wasm-simd', 'cpu/wasm-simd', 'cpu/wasm-simd']);
    await k.dispose();
    const cases: [CreateKernelsOptions, string][] = [
      [{ explore: { factor: 0.5 } }, 'options.explore.factor'],
      [{ explore: { trialMaxMs: -1 } }, 'options.explore.trialMaxMs'],
      [{ explore: { trialCalls: 0 } }, 'options.explore.trialCalls'],
      [{ explore: { trialCalls: 1.5 } }, 'options.explore.trialCalls'],
      [{ explore: { trialMinMs: -1 } }, 'options.explore.trialMinMs'],
      [{ explore: { trialMinMs: Infinity } }, 'options.explore.trialMinMs'],
      [{ explore: { trialMaxCalls: 0 } }, 'options.explore.trialMaxCalls'],
      [{ explore: { trialCalls: 4, trialMaxCalls: 3 } }, 'options.explore.trialMaxCalls'],
      [{ explore: { trialRunMs: -5 } }, 'options.explore.trialRunMs'],
      [{ explore: { trialRunMs: '50' as never } }, 'options.explore.trialRunMs'],
      [{ explore: { closeRace: 0.9 } }, 'options.explore.closeRace'],
      [{ explore: { closeRace: Number.NaN } }, 'options.explore.closeRace'],
      [{ explore: 'yes' as never }, 'options.explore'],
      [{ backend: 'cpu', explore: true }, 'options.explore'],
    ];
    for (const [options, parameter] of cases) {
      const err = await createKernels(options, loaders, noEnv).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).parameter).toBe(parameter);
    }
  });

  it('a DeviceArray input keeps its rule: its own key, and moving it is not tried when predicted far slower', async () => {
    // cpu copies cost 0.5 ms per byte each way: moving a 2 kB stencil input off cpu is predicted 1 s.
    const slowCopies = { upload: { fixedMs: 0, msPerByte: 0.5 }, download: { fixedMs: 0, msPerByte: 0.5 } };
    const model: CostModel = { backends: { cpu: cost('cpu', { fixedMs: 10 }, slowCopies), piscina: cost('piscina/default threads', { fixedMs: 20 }) } };
    const { loaders, runs } = timedLoaders(DELAYS);
    const k = await createKernels({ costModel: model, explore: ONE }, loaders, noEnv);
    const args = makeStencil3dArgs({ n: 8, steps: 2, boundary: 'copy' });
    // Host input: both candidates are tried; piscina is measured faster.
    const host = [];
    for (let i = 0; i < 5; i++) host.push((await k.stencil3d(args)).route);
    expect(host[4]).toMatchObject({ choice: 'measured', backend: 'piscina' });
    const own = createCpuBackend();
    const onCpu = (await own.stencil3d(args, { output: 'device' })).data as DeviceArray<Float32Array>;
    runs.length = 0;
    const resident = [];
    for (let i = 0; i < 3; i++) resident.push((await k.stencil3d({ ...args, input: onCpu })).route);
    // Its own key: the host key's piscina does not apply. Staying on cpu measures 40 ms; piscina,
    // predicted 1044 ms with the move, is beyond 4× that.
    expect(resident[0]!.key).not.toBe(host[0]!.key);
    expect(resident.map((r) => `${r.choice} ${r.backend}`)).toEqual(['warm-up cpu', 'trial cpu', 'measured cpu']);
    expect(resident[2]!.runnerUp).toBeUndefined();
    expect(runs.every((r) => r.startsWith('cpu/'))).toBe(true);
    onCpu.dispose();
    await own.dispose();
    await k.dispose();
  });
});
