import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DisposedError, InvalidArgumentError } from '@kernelkit/core';
import { createCpuBackend } from '@kernelkit/cpu';
import { OP_NAMES, gridSearchWork, makeConv2dArgs, makeScanArgs, makeStencil3dArgs, validateGridSearch, verifyResult, type BackendName, type DeviceArray } from '@kernelkit/ops';
import { createKernels } from '../src/kernels.js';
import { defaultLoaders } from '../src/loaders.js';
import { cachedBackend, machineIdentity, readCalibrationCache, writeCalibrationCache, CALIBRATION_FORMAT_VERSION } from '../src/router/cache.js';
import { UNCALIBRATED_MAX_WORK } from '../src/router/router.js';
import type { BackendCost, CostModel, TimeFit } from '../src/router/cost-model.js';
import { fitTime } from '../src/router/fit.js';
import { timeOf } from '../src/router/cost-model.js';
import { formatCopySpeed } from '../src/router/bands.js';
import { fakeLoaders } from './fakes.js';

const noEnv = {};
const tmp = (): string => join(mkdtempSync(join(tmpdir(), 'kk-route-')), 'calibration.json');
const ALL_VARIANTS = Object.fromEntries(OP_NAMES.map((op) => [op, createCpuBackend().variants(op)]));

/** A backend cost whose every op has `fit` (under the cpu backend's variant names, which the fakes have). */
function cost(key: string, fit: Partial<TimeFit>, extra: Partial<BackendCost> = {}): BackendCost {
  const f: TimeFit = { fixedMs: 0, msPerWork: 0, msPerPass: 0, ...fit };
  const ops = Object.fromEntries(OP_NAMES.map((op) => [op, { [ALL_VARIANTS[op]![0]!]: { fit: f, samples: [] } }]));
  return { key, description: key, software: false, startMs: 0, upload: { fixedMs: 0, msPerByte: 0 }, download: { fixedMs: 0, msPerByte: 0 }, variants: ALL_VARIANTS, ops, ...extra };
}

// scan work = bytes moved = 8 per u32 element. cpu: 1 ns/byte; piscina: 5 ms + 0.25 ns/byte: the
// lines cross at 5 / 0.75e-6 ≈ 6.67e6 bytes, i.e. about 833k elements.
const THRESHOLD_MODEL: CostModel = {
  backends: { cpu: cost('cpu', { msPerWork: 1e-6 }), piscina: cost('piscina/default threads', { fixedMs: 5, msPerWork: 0.25e-6 }) },
};

describe('routing by predicted time (exploration off)', () => {
  it('sends a call below the crossover to one backend and above it to the other, with the runner-up', async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    const k = await createKernels({ explore: false, costModel: THRESHOLD_MODEL }, loaders, noEnv);
    expect(k.route).toBe('auto');
    const small = await k.scan(makeScanArgs({ n: 800_000, dtype: 'u32' }));
    expect(small.route).toMatchObject({ mode: 'auto', backend: 'cpu', runnerUp: { backend: 'piscina' } });
    expect(small.route.predictedMs).toBeCloseTo(6.4, 5);
    expect(small.route.runnerUp!.predictedMs).toBeCloseTo(6.6, 5);
    expect(small.notes?.[0]).toMatch(/^routed to cpu\/wasm-simd: predicted 6\.4 ms, runner-up piscina\/wasm-simd 6\.6 ms/);
    const big = await k.scan(makeScanArgs({ n: 870_000, dtype: 'u32' }));
    expect(big.route.backend).toBe('piscina');
    expect(big.data.length).toBe(870_000);
    await k.dispose();
  });

  it("counts a backend's start-up only until it is started", async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    // piscina is the default backend (started at creation); cpu is 3× faster per byte but costs 20 ms to start.
    const model: CostModel = { backends: { piscina: cost('p', { msPerWork: 3e-6 }), cpu: cost('cpu', { msPerWork: 1e-6 }, { startMs: 20 }) } };
    const k = await createKernels({ explore: false, costModel: model }, loaders, noEnv);
    expect(await k.started()).toEqual(['piscina']);
    // 8e5 bytes: piscina 2.4 ms vs cpu 20.8 ms with start-up.
    expect((await k.scan(makeScanArgs({ n: 100_000, dtype: 'u32' }))).route.backend).toBe('piscina');
    // 1.6e7 bytes: piscina 48 ms vs cpu 36 ms even with start-up: cpu starts.
    const big = await k.scan(makeScanArgs({ n: 2_000_000, dtype: 'u32' }));
    expect(big.route.backend).toBe('cpu');
    expect(big.route.predictedMs).toBeCloseTo(36, 9);
    expect(await k.started()).toEqual(['piscina', 'cpu']);
    // Now started, cpu wins the small call too.
    const small = await k.scan(makeScanArgs({ n: 100_000, dtype: 'u32' }));
    expect(small.route.backend).toBe('cpu');
    expect(small.route.predictedMs).toBeCloseTo(0.8, 9);
    await k.dispose();
  });

  it('keeps a DeviceArray input on its backend when moving it costs more, and moves it when it does not', async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    // cpu computes at 2 ns per update, piscina at 1 ns; cpu copies cost 10 ns/byte each way.
    const slowCopies = { upload: { fixedMs: 0, msPerByte: 1e-5 }, download: { fixedMs: 0, msPerByte: 1e-5 } };
    const model: CostModel = { backends: { cpu: cost('cpu', { msPerWork: 2e-6 }, slowCopies), piscina: cost('p', { msPerWork: 1e-6 }) } };
    const k = await createKernels({ explore: false, costModel: model }, loaders, noEnv);
    const args = makeStencil3dArgs({ n: 32, steps: 2, boundary: 'copy' });
    // Host input: piscina (0.07 ms) beats cpu (0.13 ms).
    expect((await k.stencil3d(args)).route.backend).toBe('piscina');
    const own = createCpuBackend();
    const onCpu = (await own.stencil3d(args, { output: 'device' })).data as DeviceArray<Float32Array>;
    // Resident on cpu: staying saves its upload (1.3 ms); moving costs its download (1.3 ms): it stays.
    const r = await k.stencil3d({ ...args, input: onCpu });
    expect(r.route.backend).toBe('cpu');
    expect(r.route.runnerUp?.backend).toBe('piscina');
    expect(r.route.runnerUp!.predictedMs).toBeGreaterThan(r.route.predictedMs! + 1);
    // With 100 steps the compute difference outweighs the copy: it moves.
    const many = await k.stencil3d({ ...args, input: onCpu, steps: 100 });
    expect(many.route.backend).toBe('piscina');
    onCpu.dispose();
    await own.dispose();
    await k.dispose();
  });

  it('charges a fit with a bytes term for the bytes a call moves: of two calls of like work, the one moving 16× the bytes goes elsewhere', async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    // cpu: 1 ns per multiply-add. piscina here stands for a GPU: 0.5 ns per multiply-add plus 1 ns per byte moved.
    const model: CostModel = { backends: { cpu: cost('cpu', { msPerWork: 1e-6 }), piscina: cost('p', { msPerWork: 0.5e-6, msPerByte: 1e-6 }) } };
    const k = await createKernels({ explore: false, costModel: model }, loaders, noEnv);
    // 512² K=11: 31.7M multiply-adds, 2 MiB moved: 15.9 + 2.1 ms against 31.7.
    const few = await k.conv2d(makeConv2dArgs({ batch: 1, height: 512, width: 512, k: 11 }));
    expect(few.route.backend).toBe('piscina');
    expect(few.route.predictedMs).toBeCloseTo(0.5e-6 * 512 * 512 * 121 + 1e-6 * (2 * 512 * 512 * 4 + 121 * 4), 6);
    // 2048² K=3: 37.7M multiply-adds, 32 MiB moved: 18.9 + 33.6 ms against 37.7.
    const many = await k.conv2d(makeConv2dArgs({ batch: 1, height: 2048, width: 2048, k: 3 }));
    expect(many.route.backend).toBe('cpu');
    expect(many.route.runnerUp?.backend).toBe('piscina');
    await k.dispose();
  });

  it("predicts a grid search from its pruned search's node tests, not its points", async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    // cpu: 10 µs per node test; piscina: 5 ms + 1 µs per node test.
    const model: CostModel = { backends: { cpu: cost('cpu', { msPerWork: 0.01 }), piscina: cost('piscina/default threads', { fixedMs: 5, msPerWork: 0.001 }) } };
    const k = await createKernels({ explore: false, costModel: model }, loaders, noEnv);
    // 10^4 points either way: counted in points, piscina (15 ms) would beat cpu (100 ms) on both.
    const dims = Array.from({ length: 4 }, () => ({ lower: 0, upper: 1, step: 0.1 }));
    const grid = (target: number, tolerance: number) => ({ dims, coefficients: [1, 1, 1, 1], targets: [target], tolerances: [tolerance] });
    // Nothing pruned: 1 + 10 + 100 + 1000 node tests and 1000 last-axis ranges.
    const loose = await k.gridSearch(grid(2, 10));
    expect(loose.route).toMatchObject({ backend: 'piscina', runnerUp: { backend: 'cpu' } });
    expect(loose.route.predictedMs).toBeCloseTo(5 + 0.001 * gridSearchWork(validateGridSearch(grid(2, 10))), 9);
    expect(gridSearchWork(validateGridSearch(grid(2, 10)))).toBe(2111);
    expect(loose.data.count).toBe(10_000);
    // Σx ≤ 0.05 keeps one value per axis: 1 + 10 + 10 + 10 node tests and one last-axis range, and cpu's lack of a fixed cost wins.
    const tight = await k.gridSearch(grid(0, 0.05));
    expect(gridSearchWork(validateGridSearch(grid(0, 0.05)))).toBe(32);
    expect(tight.route).toMatchObject({ backend: 'cpu', runnerUp: { backend: 'piscina' } });
    expect(tight.data.count).toBe(1);
    await k.dispose();
  });

  it('routes a pinned variant only among backends that have it, and falls back when none is predicted', async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    const k = await createKernels({ explore: false, costModel: { backends: { cpu: cost('cpu', { msPerWork: 1 }) } } }, loaders, noEnv);
    const r = await k.scan(makeScanArgs({ n: 10, dtype: 'u32' }), { variant: 'sequential' });
    expect(r.route.backend).toBe('cpu');
    expect(r.variant).toBe('sequential');
    // No model entry has gridSearch's 'nonexistent': the default backend gets the call and refuses it.
    await expect(k.scan(makeScanArgs({ n: 10, dtype: 'u32' }), { variant: 'nonexistent' })).rejects.toThrow(/nonexistent/);
    await k.dispose();
  });

  it('starts backends lazily and disposes every one it started', async () => {
    const { loaders, created, calls } = fakeLoaders({ webgpu: { ok: true }, piscina: { ok: true }, cpu: { ok: true } }, { available: true, software: false });
    const model: CostModel = {
      backends: {
        webgpu: cost('webgpu/adapter', { fixedMs: 1000 }),
        cpu: cost('cpu', { msPerWork: 1e-6 }),
        piscina: cost('piscina/default threads', { fixedMs: 2, msPerWork: 1e-7 }),
      },
    };
    const k = await createKernels({ explore: false, costModel: model }, loaders, noEnv);
    expect(k.selected).toBe('webgpu');
    expect(calls.log.map((c) => c.backend)).toEqual(['webgpu']);
    expect((await k.scan(makeScanArgs({ n: 1000, dtype: 'u32' }))).route.backend).toBe('cpu');
    expect((await k.scan(makeScanArgs({ n: 1_000_000, dtype: 'u32' }))).route.backend).toBe('piscina');
    expect(await k.started()).toEqual(['webgpu', 'cpu', 'piscina']);
    await k.dispose();
    expect(created).toHaveLength(3);
    expect(created.map((b) => b.disposeCalls)).toEqual([1, 1, 1]);
    expect(created.every((b) => b.disposed)).toBe(true);
  });

  it('warmUp() warms every backend running now, and rejects once disposed', async () => {
    const { loaders, created } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    const k = await createKernels({ explore: false, costModel: THRESHOLD_MODEL }, loaders, noEnv);
    const warmed = (): Record<string, number> => Object.fromEntries(created.map((b) => [b.name, b.warmUpCalls]));
    await k.warmUp();
    expect(warmed()).toEqual({ piscina: 1 });
    await k.scan(makeScanArgs({ n: 1000, dtype: 'u32' }));
    expect(await k.started()).toEqual(['piscina', 'cpu']);
    await k.warmUp();
    expect(warmed()).toEqual({ piscina: 2, cpu: 1 });
    await k.dispose();
    await expect(k.warmUp()).rejects.toBeInstanceOf(DisposedError);
  });

  it('a candidate that fails to start is skipped with its reason and the next best runs', async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: false, reason: 'workers not built' }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    const model: CostModel = { backends: { piscina: cost('p', { msPerWork: 1e-9 }), cpu: cost('cpu', { msPerWork: 1e-6 }) } };
    const k = await createKernels({ explore: false, costModel: model }, loaders, noEnv);
    const r = await k.scan(makeScanArgs({ n: 1000, dtype: 'u32' }));
    expect(r.route.backend).toBe('cpu');
    expect(k.skipped).toContainEqual({ backend: 'piscina', reason: 'workers not built' });
    await k.dispose();
  });
});

describe('fixed routing keeps one backend', () => {
  it('backend, backends and KERNELKIT_BACKEND select route fixed; route auto with backend is refused', async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } });
    for (const [opts, env] of [[{ backend: 'cpu' }, noEnv], [{ backends: ['cpu'] }, noEnv], [{}, { KERNELKIT_BACKEND: 'cpu' }], [{ route: 'fixed', backends: ['cpu'] }, noEnv]] as const) {
      const k = await createKernels(opts as never, loaders, env);
      expect(k.route).toBe('fixed');
      const r = await k.scan(makeScanArgs({ n: 10, dtype: 'u32' }));
      expect(r.route).toMatchObject({ mode: 'fixed', backend: 'cpu' });
      await expect(k.calibrate()).rejects.toThrow(/route/);
      await k.dispose();
    }
    const err = await createKernels({ route: 'auto', backend: 'cpu' }, loaders, noEnv).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).parameter).toBe('options.route');
    const bad = await createKernels({ route: 'fast' as never }, loaders, noEnv).catch((e: unknown) => e);
    expect((bad as InvalidArgumentError).parameter).toBe('options.route');
  });
});

describe('the calibration cache', () => {
  const machine = machineIdentity();
  afterEach(() => {
    process.removeAllListeners('warning');
  });

  it('round-trips a backend cost for this machine and keeps other machines', async () => {
    const path = tmp();
    const c = cost('piscina/default threads', { fixedMs: 1, msPerWork: 2e-6 });
    await writeCalibrationCache(path, { ...machine, cpu: 'another cpu' }, [cost('cpu', { msPerWork: 1 })]);
    await writeCalibrationCache(path, machine, [c]);
    const { file, note } = await readCalibrationCache(path);
    expect(note).toBeUndefined();
    expect(cachedBackend(file, machine, c.key)).toEqual(c);
    // A foreign machine's entry is there but never used for this one.
    expect(Object.keys(file.machines)).toHaveLength(2);
    expect(cachedBackend(file, machine, 'cpu')).toBeUndefined();
    expect(JSON.parse(readFileSync(path, 'utf8')).version).toBe(CALIBRATION_FORMAT_VERSION);
  });

  it('routes from a cached model without measuring, and re-measures on another format version', async () => {
    const path = tmp();
    const { loaders } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    await writeCalibrationCache(path, machine, [cost('cpu', { msPerWork: 1e-9 }), cost('piscina/default threads', { msPerWork: 1 })]);
    const k = await createKernels({ calibrationCache: path }, loaders, noEnv);
    const r = await k.scan(makeScanArgs({ n: 1000, dtype: 'u32' }));
    expect(r.route.backend).toBe('cpu');
    expect(r.notes?.some((n) => n.startsWith('calibrated'))).toBe(false);
    await k.dispose();

    const stale = JSON.parse(readFileSync(path, 'utf8')) as { version: number };
    writeFileSync(path, JSON.stringify({ ...stale, version: CALIBRATION_FORMAT_VERSION + 1 }));
    const warnings: Error[] = [];
    process.on('warning', (w) => warnings.push(w));
    const again = await createKernels({ calibrationCache: path, calibrationBudgetMs: 3000 }, loaders, noEnv);
    // Above UNCALIBRATED_MAX_WORK: a first call this large calibrates its op.
    const m = await again.scan(makeScanArgs({ n: 1 << 14, dtype: 'u32' }));
    expect(m.notes?.find((n) => n.startsWith('calibrated scan on piscina, cpu'))).toBeDefined();
    await again.dispose();
    // Measured and written back in this version; a stale version is news, not a warning.
    expect(JSON.parse(readFileSync(path, 'utf8')).version).toBe(CALIBRATION_FORMAT_VERSION);
    expect(warnings.filter((w) => w.message.includes('calibration'))).toEqual([]);
  });

  it('a corrupt file is ignored with one warning, never a crash', async () => {
    const path = tmp();
    writeFileSync(path, '{"version": 1, "machines": ');
    const warnings: Error[] = [];
    process.on('warning', (w) => warnings.push(w));
    const first = await readCalibrationCache(path);
    const second = await readCalibrationCache(path);
    expect(first.file.machines).toEqual({});
    expect(first.note).toMatch(/not JSON/);
    expect(second.note).toMatch(/not JSON/);
    await new Promise((r) => setImmediate(r));
    expect(warnings.filter((w) => w.message.includes(path))).toHaveLength(1);
    // A malformed entry (a negative rate) is dropped, the rest of the file is used.
    writeFileSync(path, JSON.stringify({ version: CALIBRATION_FORMAT_VERSION, machines: { x: { machine, backends: { cpu: { ...cost('cpu', {}), startMs: 'soon' } } } } }));
    const partial = await readCalibrationCache(path);
    expect(partial.note).toMatch(/malformed/);
    expect(partial.file.machines['x']?.backends).toEqual({});
  });
});

describe('calls too small to be worth a first calibration', () => {
  it('run on the default backend and start nothing until a call of their op above the bound calibrates it', async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    const k = await createKernels({ calibrationCache: tmp(), calibrationBudgetMs: 1500 }, loaders, noEnv);
    try {
      // scan work is 8 bytes moved per u32 element: 8192 elements sit exactly at the bound.
      expect(8 * 8192).toBe(UNCALIBRATED_MAX_WORK);
      const atBound = makeScanArgs({ n: 8192, dtype: 'u32' });
      const small = await k.scan(atBound);
      expect(verifyResult('scan', atBound, small.data)).toBeUndefined();
      expect(small.route).toMatchObject({ backend: k.selected, choice: 'default' });
      expect(small.route.reason).toMatch(/before scan is calibrated/);
      expect(small.notes?.some((n) => n.startsWith('calibrated'))).toBe(false);
      expect(await k.started()).toEqual([k.selected]);
      // Other ops are not held back by this one.
      const stencil = makeStencil3dArgs({ n: 4, steps: 1, boundary: 'copy' });
      expect((await k.stencil3d(stencil)).route.choice).toBe('default');

      const above = await k.scan(makeScanArgs({ n: 8193, dtype: 'u32' }));
      expect(above.notes?.find((n) => n.startsWith('calibrated scan on '))).toBeDefined();
      // Calibrated now: small scans are routed by the model like any other.
      const after = await k.scan(atBound);
      expect(after.route.choice).not.toBe('default');
      expect(after.route.predictedMs).toBeGreaterThan(0);
    } finally {
      await k.dispose();
    }
  });
});

describe('fits', () => {
  it('recovers a line with a per-step term and never returns negative coefficients', () => {
    const f = fitTime([
      { work: 1e6, passes: 16, ms: 2 + 1e-6 * 1e6 + 0.5 * 16 },
      { work: 1e6, passes: 2, ms: 2 + 1 + 0.5 * 2 },
      { work: 4e6, passes: 8, ms: 2 + 4 + 0.5 * 8 },
    ]);
    expect(f.fixedMs).toBeCloseTo(2, 6);
    expect(f.msPerWork).toBeCloseTo(1e-6, 12);
    expect(f.msPerPass).toBeCloseTo(0.5, 6);
    const noisy = fitTime([
      { work: 1e6, passes: 1, ms: 10 },
      { work: 2e6, passes: 1, ms: 9 },
    ]);
    expect(noisy.msPerWork).toBeGreaterThan(0);
    expect(noisy.fixedMs).toBe(0);
  });

  it('fits a bytes term where the samples carry bytes apart from work, so a copy-bound GPU extrapolates by its copies', () => {
    // A GPU's conv2d calibration: 256² K=7, 1024² K=5 and 1024² K=11, each 1 ms + 0.5 ms/MB moved + 1e-9 ms per multiply-add.
    const truth = (work: number, bytes: number): number => 1 + 0.5e-6 * bytes + 1e-9 * work;
    const sizes = [
      { work: 3.21e6, bytes: 524_292 },
      { work: 2.62e7, bytes: 8_388_708 },
      { work: 1.27e8, bytes: 8_388_900 },
    ];
    const f = fitTime(sizes.map((z) => ({ ...z, passes: 1, ms: truth(z.work, z.bytes) })));
    expect(f.msPerByte).toBeCloseTo(0.5e-6, 12);
    // The seed sizes, 13-64× the largest sample's multiply-adds, 512 MiB moved each: 16×2048² K=11 and 8192² K=5.
    const seed = [
      { work: 8.12e9, bytes: 2 * 16 * 2048 * 2048 * 4 },
      { work: 1.68e9, bytes: 2 * 8192 * 8192 * 4 },
    ];
    for (const z of seed) expect(timeOf(f, z.work, 1, z.bytes) / truth(z.work, z.bytes)).toBeCloseTo(1, 6);
    // Without bytes the same times charged to multiply-adds miss 8192² K=5 by over 2×.
    const workOnly = fitTime(sizes.map((z) => ({ work: z.work, passes: 1, ms: truth(z.work, z.bytes) })));
    expect(workOnly.msPerByte ?? 0).toBe(0);
    expect(timeOf(workOnly, seed[1]!.work, 1) / truth(seed[1]!.work, seed[1]!.bytes)).toBeLessThan(0.5);
    // Noise making the larger multiply-add count the faster call drops the work term, not the copies.
    const noisy = fitTime([
      { work: 3.21e6, bytes: 524_292, passes: 1, ms: 1.3 },
      { work: 2.62e7, bytes: 8_388_708, passes: 1, ms: 5.3 },
      { work: 1.27e8, bytes: 8_388_900, passes: 1, ms: 5.1 },
    ]);
    expect(noisy.msPerWork).toBe(0);
    expect(noisy.msPerByte).toBeGreaterThan(0);
    // Bytes in proportion to work (a scan) add nothing a work term does not: no bytes term.
    const scan = fitTime([1e6, 4e6, 8e6].map((n) => ({ work: 8 * n, bytes: 8 * n, passes: 1, ms: 0.2 + 1e-6 * 8 * n })));
    expect(scan.msPerByte).toBeUndefined();
  });

  it('fits in relative error: a small call is predicted near its own measurement, not by the large ones', () => {
    // The cpu backend's conv2d calibration on the 2-core dev VM: in absolute error the fit put 3.1 ms on the 0.76 ms call.
    const samples = [
      { work: 3.21e6, passes: 1, ms: 0.76 },
      { work: 2.62e7, passes: 1, ms: 9.93 },
      { work: 1.27e8, passes: 1, ms: 19.15 },
    ];
    const f = fitTime(samples);
    const ratios = samples.map((s) => (f.fixedMs + f.msPerWork * s.work) / s.ms);
    expect(ratios[0]).toBeGreaterThan(0.8);
    expect(ratios[0]).toBeLessThan(1.25);
    // No sample is fitted more than about 2× off (they are not on one line).
    for (const r of ratios) expect(Math.abs(Math.log2(r))).toBeLessThan(1.1);
  });
});

describe('a real calibration (cpu and piscina, tiny budget)', () => {
  it('measures, saves and routes by what it measured', async () => {
    const path = tmp();
    const loaders = { ...defaultLoaders, probeWebGpu: async () => ({ available: false, reason: 'left out of this test' }) };
    const k = await createKernels({ calibrationCache: path, threads: 2 }, loaders, noEnv);
    try {
      const report = await k.calibrate({ ops: ['scan'], budgetMs: 4000 });
      expect([...report.backends].sort()).toEqual(['cpu', 'piscina']);
      expect(report.ms).toBeLessThan(8000);
      const scanFits = (['cpu', 'piscina'] as BackendName[]).map((b) => Object.values(report.model.backends[b]?.ops.scan ?? {})[0]);
      expect(scanFits.every((f) => f !== undefined && f.samples.length > 0 && f.fit.msPerWork > 0)).toBe(true);
      const { file } = await readCalibrationCache(path);
      expect(cachedBackend(file, machineIdentity(), 'cpu')?.ops.scan).toBeDefined();
      const r = await k.scan(makeScanArgs({ n: 5000, dtype: 'u32' }));
      expect(['cpu', 'piscina']).toContain(r.route.backend);
      expect(r.route.predictedMs).toBeGreaterThan(0);
    } finally {
      await k.dispose();
    }
  });
});

describe('calibration in a child process', () => {
  it("is the default with the package's backends: this process starts only what calls are routed to, and reads the child's fits", async () => {
    const path = tmp();
    const k = await createKernels({ calibrationCache: path, threads: 2 }, defaultLoaders, noEnv);
    try {
      const before = await k.started();
      const steps: string[] = [];
      const report = await k.calibrate({ ops: ['scan'], budgetMs: 2000, onProgress: (p) => steps.push(p.step) });
      expect(report.saved).toMatch(/in a child process$/);
      expect(report.backends).toContain('cpu');
      expect(steps).toContain('cpu scan #1');
      // Measured there, not started here.
      expect(await k.started()).toEqual(before);
      expect(Object.values(k.costModel?.backends.cpu?.ops.scan ?? {})[0]?.samples.length).toBeGreaterThan(0);
      // Nothing is missing now: no second child.
      const again = await k.calibrate({ ops: ['scan'], budgetMs: 2000 });
      expect(again.backends).toEqual([]);
      const r = await k.scan(makeScanArgs({ n: 5000, dtype: 'u32' }));
      expect(r.route.predictedMs).toBeGreaterThan(0);
    } finally {
      await k.dispose();
    }
  });

  it("injected loaders calibrate in this process (a child cannot have them); calibrateIn is checked", async () => {
    const { loaders, calls } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    const k = await createKernels({ calibrationCache: tmp() }, loaders, noEnv);
    const report = await k.calibrate({ ops: ['scan'], budgetMs: 1000 });
    expect(report.saved).not.toMatch(/child/);
    expect(calls.log.map((c) => c.backend)).toContain('cpu');
    await k.dispose();
    await expect(createKernels({ calibrateIn: 'elsewhere' as 'child' }, loaders, noEnv)).rejects.toThrow(InvalidArgumentError);
  });
});

describe('settled routes', () => {
  it("a settled key's calls of one size share its route; a call of another size, or after a backend was released, ranks again", async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    const k = await createKernels({ costModel: THRESHOLD_MODEL }, loaders, noEnv);
    const args = makeScanArgs({ n: 4000, dtype: 'u32' });
    let r = await k.scan(args);
    for (let i = 0; i < 200 && !r.route.settled; i++) r = await k.scan(args);
    expect(r.route).toMatchObject({ choice: 'measured', settled: true });
    const first = await k.scan(args);
    const second = await k.scan(args);
    expect(second.route).toBe(first.route);
    expect(second.notes?.[0]).toBe(first.notes?.[0]);
    expect(Object.isFrozen(second.route) && Object.isFrozen(second.route.trials)).toBe(true);
    expect(second.data).toEqual((await createCpuBackend().scan(args)).data);
    // Same routing key (work within one band), another size: a route of its own, the same choice.
    const other = await k.scan(makeScanArgs({ n: 4001, dtype: 'u32' }));
    expect(other.route.key).toBe(first.route.key);
    expect(other.route).not.toBe(first.route);
    expect(other.route).toMatchObject({ backend: first.route.backend, variant: first.route.variant, choice: 'measured' });
    await k.dispose();
  });

  it('a call with `timing` while its key explores runs the predicted pick and times no trial; once settled it takes the settled choice', async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    const k = await createKernels({ costModel: THRESHOLD_MODEL }, loaders, noEnv);
    const args = makeScanArgs({ n: 4000, dtype: 'u32' });
    const timed = await k.scan(args, { timing: true });
    expect(timed.route).toMatchObject({ choice: 'predicted', settled: false, backend: 'cpu' });
    expect(timed.route.reason).toMatch(/timing/);
    const timedTrials = (x: typeof timed): number => Object.values(x.route.trialCalls ?? {}).reduce((a, b) => a + b, 0);
    // Past the warm-ups, into the trials: a timed call between two untimed ones adds no trial call.
    let r = await k.scan(args);
    for (let i = 0; i < 400 && r.route.choice !== 'trial'; i++) r = await k.scan(args);
    const between = await k.scan(args, { timing: true });
    expect(between.route.choice).toBe('predicted');
    const next = await k.scan(args);
    expect(next.route.choice).toBe('trial');
    expect(timedTrials(next)).toBe(timedTrials(r) + 1);
    r = next;
    for (let i = 0; i < 400 && !r.route.settled; i++) r = await k.scan(args);
    expect(r.route).toMatchObject({ choice: 'measured', settled: true });
    const after = await k.scan(args, { timing: true });
    expect(after.route).toMatchObject({ choice: 'measured', backend: r.route.backend, variant: r.route.variant });
    await k.dispose();
  });
});

describe('one read of every argument on the routed path', () => {
  it('routing and the backend see the values of a single read of args and options', async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'no adapter' });
    const k = await createKernels({ costModel: THRESHOLD_MODEL }, loaders, noEnv);
    const plain = makeStencil3dArgs({ n: 6, steps: 2, boundary: 'zero' });
    const reads: Record<string, number> = {};
    // Each getter answers differently on its second read: a second read shows up as a wrong shape.
    const counted = <T>(key: string, first: T, later: T) => () => ((reads[key] = (reads[key] ?? 0) + 1) === 1 ? first : later);
    const args = {};
    for (const [key, value] of Object.entries(plain)) {
      Object.defineProperty(args, key, { enumerable: true, get: counted(key, value, key === 'steps' ? 4000 : value) });
    }
    const options = {};
    Object.defineProperty(options, 'timing', { enumerable: true, get: counted('timing', true, false) });
    const r = await k.stencil3d(args as typeof plain, options);
    expect(reads).toEqual({ ...Object.fromEntries(Object.keys(plain).map((key) => [key, 1])), timing: 1 });
    const expected = await createCpuBackend().stencil3d(plain);
    expect(r.data).toEqual(expected.data);
    expect(r.timing).toBeDefined();
    await k.dispose();
  });
});

describe('the calibration table', () => {
  it('shows copy speeds in GB/s, and one past any host copy or PCIe link as free, with the fitted figure', () => {
    expect(formatCopySpeed(1e-6 / 6.5)).toBe('6.50 GB/s');
    expect(formatCopySpeed(0)).toBe('free');
    expect(formatCopySpeed(1e-6 / 11612)).toBe('free (under what calibration resolves: fitted 1.2e+4 GB/s)');
    expect(formatCopySpeed(1e-6 / 260)).toBe('free (under what calibration resolves: fitted 2.6e+2 GB/s)');
  });
});
