import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '@kernelkit/core';
import { validateConv2d, validateConvLayer, verifyResult, type Conv2dArgs, type OpContext } from '@kernelkit/ops';
import { conv2dCase, convLayerCase } from '@kernelkit/ops/testing';
import { createWebGpuBackend } from '../src/index.js';
import {
  autoNote,
  CONV2D_CANDIDATES,
  whyConv2dConfigCannotRun,
  conv2dLimits,
  conv2dOp,
  runConv2dConfig,
  SWEEP_MIN_PIXELS,
  sweepSlice,
  type Conv2dLimits,
} from '../src/ops/conv2d.js';
import { convLayerCandidates, runConvLayerConfig } from '../src/ops/conv-layer.js';
import { COARSENED_CONFIG, conv2dTileBytes, TILED_CONFIG } from '../src/ops/conv2d.wgsl.js';
import { openAdapter } from '../src/runtime/adapter.js';
import { GpuDevice } from '../src/runtime/device.js';
import { parseTuningCache, TUNING_CACHE_VERSION } from '../src/tuning/cache-file.js';
import { conv2dShapeClass, conv2dShapeKey, log2Bucket } from '../src/tuning/shape-class.js';
import { adapterKeyOf, Tuner, type TuneCandidate } from '../src/tuning/tuner.js';

const tmp = mkdtempSync(join(tmpdir(), 'kernelkit-tuning-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let fileNo = 0;
const cacheFile = () => join(tmp, `cache-${++fileNo}`, 'tuning.json');

type Fake = { readonly id: string };
const fakes: TuneCandidate<Fake>[] = ['a', 'b', 'c', 'd'].map((id) => ({ name: `cfg-${id}`, config: { id } }));

/** A fake `time`: scripted ms per config id, one value per run; records the call order. */
function scripted(script: Record<string, readonly number[]>) {
  const calls: string[] = [];
  const seen: Record<string, number> = {};
  const time = async (c: Fake): Promise<number> => {
    calls.push(c.id);
    const i = (seen[c.id] = (seen[c.id] ?? -1) + 1);
    const ms = script[c.id]?.[i];
    if (ms === undefined) throw new Error(`no scripted run ${i} for ${c.id}`);
    return ms;
  };
  return { time, calls };
}

const SCRIPT = { a: [2, 2, 2], b: [9, 1, 1], c: [0.5, 8, 9], d: [3, 3, 3] };

describe('Tuner (fake candidates and timings, no GPU)', () => {
  it('keeps the median of 3 runs per candidate, round-robin, and picks the fastest', async () => {
    const { time, calls } = scripted(SCRIPT);
    const choice = await new Tuner('fake-adapter').pick('op k=1', fakes, time);
    // b wins on its median (1) although c has the single fastest run and b the slowest one.
    expect(choice.candidate.name).toBe('cfg-b');
    expect(choice.source).toBe('sweep');
    expect(choice.timings).toEqual({ 'cfg-a': 2, 'cfg-b': 1, 'cfg-c': 8, 'cfg-d': 3 });
    expect(choice.sweepMs).toBeGreaterThanOrEqual(0);
    expect(choice.notes).toBeUndefined();
    expect(calls.join('')).toBe('abcdabcdabcd');
  });

  it('answers the same key from memory without timing; another key sweeps', async () => {
    const tuner = new Tuner('fake-adapter');
    await tuner.pick('k1', fakes, scripted(SCRIPT).time);
    const again = scripted({});
    const hit = await tuner.pick('k1', fakes, again.time);
    expect(hit).toEqual({ candidate: fakes[1], source: 'memory' });
    expect(again.calls).toEqual([]);
    const other = scripted({ a: [1, 1, 1], b: [5, 5, 5], c: [5, 5, 5], d: [5, 5, 5] });
    expect((await tuner.pick('k2', fakes, other.time)).candidate.name).toBe('cfg-a');
    expect(other.calls).toHaveLength(12);
  });

  it('breaks ties towards the earlier candidate and honours options.runs', async () => {
    const { time, calls } = scripted({ a: [4], b: [3], c: [3], d: [3] });
    const choice = await new Tuner('fake-adapter', { runs: 1 }).pick('k', fakes, time);
    expect(choice.candidate.name).toBe('cfg-b');
    expect(calls).toHaveLength(4);
  });

  it('re-sweeps when the remembered winner is no longer a candidate or its config changed', async () => {
    const tuner = new Tuner('fake-adapter');
    await tuner.pick('k', fakes, scripted(SCRIPT).time); // cfg-b wins
    const without = scripted({ a: [2, 2, 2], c: [1, 1, 1] });
    expect((await tuner.pick('k', [fakes[0]!, fakes[2]!], without.time)).candidate.name).toBe('cfg-c');
    expect(without.calls).toHaveLength(6);
    const changed = scripted({ a: [2, 2, 2], c: [1, 1, 1] });
    const renamed: TuneCandidate<Fake>[] = [fakes[0]!, { name: 'cfg-c', config: { id: 'c', extra: 1 } as Fake }];
    expect((await tuner.pick('k', renamed, changed.time)).source).toBe('sweep');
  });

  it('re-sweeps when a candidate was added since the remembered sweep, even if the winner is unchanged', async () => {
    const tuner = new Tuner('fake-adapter');
    await tuner.pick('k', fakes.slice(0, 3), scripted(SCRIPT).time); // cfg-b wins among a, b, c
    expect((await tuner.pick('k', fakes.slice(0, 3), scripted({}).time)).source).toBe('memory');
    const added = scripted({ a: [2, 2, 2], b: [1, 1, 1], c: [3, 3, 3], d: [0.5, 0.5, 0.5] });
    const choice = await tuner.pick('k', fakes, added.time);
    expect(choice.source).toBe('sweep');
    expect(choice.candidate.name).toBe('cfg-d');
  });

  it('runs one sweep for concurrent picks of the same key', async () => {
    const tuner = new Tuner('fake-adapter');
    const { time, calls } = scripted(SCRIPT);
    const [x, y] = await Promise.all([tuner.pick('k', fakes, time), tuner.pick('k', fakes, time)]);
    expect(calls).toHaveLength(12);
    expect(x.candidate.name).toBe('cfg-b');
    expect(y.candidate.name).toBe('cfg-b');
    expect([x.source, y.source].sort()).toEqual(['memory', 'sweep']);
  });

  it('rejects when a timing run fails or returns no duration, and caches nothing', async () => {
    const tuner = new Tuner('fake-adapter');
    await expect(tuner.pick('k', fakes, scripted({ a: [1] }).time)).rejects.toThrow('no scripted run 0 for b');
    await expect(tuner.pick('k', fakes, async () => Number.NaN)).rejects.toMatchObject({ name: 'InvalidArgumentError', parameter: 'time' });
    const ok = scripted(SCRIPT);
    expect((await tuner.pick('k', fakes, ok.time)).source).toBe('sweep');
    expect(ok.calls).toHaveLength(12);
  });

  it('rejects bad arguments naming them', async () => {
    const t = new Tuner('fake-adapter');
    const time = scripted(SCRIPT).time;
    await expect(t.pick('k', [], time)).rejects.toMatchObject({ parameter: 'candidates' });
    await expect(t.pick('k', [fakes[0]!, fakes[0]!], time)).rejects.toMatchObject({ parameter: 'candidates' });
    await expect(t.pick('', fakes, time)).rejects.toMatchObject({ parameter: 'key' });
    await expect(t.pick('k', fakes, 'fast' as never)).rejects.toMatchObject({ parameter: 'time' });
    expect(() => new Tuner('')).toThrow(InvalidArgumentError);
    expect(() => new Tuner('x', { cachePath: '' })).toThrow(expect.objectContaining({ parameter: 'options.cachePath' }));
    expect(() => new Tuner('x', { runs: 0 })).toThrow(expect.objectContaining({ parameter: 'options.runs' }));
  });
});

describe('tuning cache file', () => {
  it('writes {version, adapters: {adapterKey: {key: {name, config, timings, measuredAt}}}} atomically', async () => {
    const path = cacheFile();
    const choice = await new Tuner('gpu-1', { cachePath: path }).pick('k', fakes, scripted(SCRIPT).time);
    expect(choice.notes).toBeUndefined();
    const json = JSON.parse(readFileSync(path, 'utf8'));
    expect(json.version).toBe(TUNING_CACHE_VERSION);
    const rec = json.adapters['gpu-1']['k'];
    expect(rec).toMatchObject({ name: 'cfg-b', config: { id: 'b' }, timings: { 'cfg-a': 2, 'cfg-b': 1, 'cfg-c': 8, 'cfg-d': 3 } });
    expect(Number.isNaN(Date.parse(rec.measuredAt))).toBe(false);
    expect(readdirSync(join(path, '..'))).toEqual(['tuning.json']); // no temp file left behind
  });

  it('a new Tuner on the same file reads it: no timing, source disk; other adapters and keys are kept', async () => {
    const path = cacheFile();
    await new Tuner('gpu-1', { cachePath: path }).pick('k', fakes, scripted(SCRIPT).time);
    const none = scripted({});
    const fresh = new Tuner('gpu-1', { cachePath: path });
    expect(await fresh.pick('k', fakes, none.time)).toEqual({ candidate: fakes[1], source: 'disk' });
    expect(await fresh.pick('k', fakes, none.time)).toEqual({ candidate: fakes[1], source: 'disk' });
    expect(none.calls).toEqual([]);
    // Another adapter sweeps for itself, and both adapters' records survive its write.
    const other = scripted({ a: [1, 1, 1], b: [2, 2, 2], c: [2, 2, 2], d: [2, 2, 2] });
    expect((await new Tuner('gpu-2', { cachePath: path }).pick('k', fakes, other.time)).source).toBe('sweep');
    await fresh.pick('k2', fakes, scripted(SCRIPT).time);
    const json = JSON.parse(readFileSync(path, 'utf8'));
    expect(Object.keys(json.adapters).sort()).toEqual(['gpu-1', 'gpu-2']);
    expect(Object.keys(json.adapters['gpu-1']).sort()).toEqual(['k', 'k2']);
    expect(json.adapters['gpu-2']['k'].name).toBe('cfg-a');
  });

  it('ignores a corrupt file with a note, then replaces it with a valid one', async () => {
    const path = cacheFile();
    await new Tuner('gpu-1', { cachePath: path }).pick('warm', fakes, scripted(SCRIPT).time); // creates the folder
    writeFileSync(path, '{"version": 1, "adapters": {"gpu-1": {"k": {"name": "cfg-a", "timi');
    const { time, calls } = scripted(SCRIPT);
    const choice = await new Tuner('gpu-1', { cachePath: path }).pick('k', fakes, time);
    expect(choice.source).toBe('sweep');
    expect(calls).toHaveLength(12);
    expect(choice.notes?.[0]).toMatch(/tuning cache .* ignored: not JSON/);
    expect(parseTuningCache(readFileSync(path, 'utf8'), path).note).toBeUndefined();
  });

  it('ignores a file of another version, a wrong skeleton and malformed records, each with a note', () => {
    expect(parseTuningCache(JSON.stringify({ version: 0, adapters: {} }), 'f').note).toMatch(/version 0, expected 1/);
    expect(parseTuningCache('[1, 2]', 'f').note).toMatch(/not a JSON object/);
    expect(parseTuningCache(JSON.stringify({ version: 1 }), 'f').note).toMatch(/no "adapters" object/);
    const good = { name: 'x', config: { id: 'x' }, timings: { x: 1 }, measuredAt: '2026-01-01T00:00:00Z' };
    const mixed = parseTuningCache(JSON.stringify({ version: 1, adapters: { g: { ok: good, bad: { ...good, timings: { x: -1 } }, worse: 7 } } }), 'f');
    expect(mixed.adapters).toEqual({ g: { ok: good } });
    expect(mixed.note).toMatch(/ignored 2 malformed entries/);
  });

  it('a wrong-version file on disk is ignored by pick with a note', async () => {
    const path = cacheFile();
    await new Tuner('gpu-1', { cachePath: path }).pick('warm', fakes, scripted(SCRIPT).time);
    const json = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...json, version: 99 }));
    const choice = await new Tuner('gpu-1', { cachePath: path }).pick('warm', fakes, scripted(SCRIPT).time);
    expect(choice.source).toBe('sweep');
    expect(choice.notes?.[0]).toMatch(/version 99, expected 1/);
  });

  it('a cache that cannot be written is a note, not an error; the pick stays in memory', async () => {
    const blocker = join(tmp, 'a-file');
    writeFileSync(blocker, 'not a folder');
    const tuner = new Tuner('gpu-1', { cachePath: join(blocker, 'sub', 'tuning.json') });
    const choice = await tuner.pick('k', fakes, scripted(SCRIPT).time);
    expect(choice.candidate.name).toBe('cfg-b');
    expect(choice.notes).toHaveLength(1);
    expect(choice.notes?.[0]).toMatch(/tuning cache .*tuning\.json not written: ENOTDIR/);
    expect((await tuner.pick('k', fakes, scripted({}).time)).source).toBe('memory');
  });
});

describe('conv2d shape classes, slices and candidate filtering', () => {
  it('buckets k, log2 width, log2 total pixels and batch==1', () => {
    expect([1, 2, 3, 4, 1023, 1024, 2047, 2048].map(log2Bucket)).toEqual([0, 1, 1, 2, 9, 10, 10, 11]);
    const key = (batch: number, height: number, width: number, k: number) => conv2dShapeKey(conv2dShapeClass({ batch, height, width, k }));
    expect(key(1, 8192, 8192, 5)).toBe('conv2d k=5 w=2^13 px=2^26 batch=1');
    expect(key(16, 2048, 2048, 11)).toBe('conv2d k=11 w=2^11 px=2^26 batch>1');
    expect(key(1, 2048, 2049, 5)).toBe(key(1, 2050, 2047 + 1, 5)); // same buckets
    expect(key(1, 2048, 2048, 5)).not.toBe(key(1, 2048, 2048, 7));
    expect(key(1, 2048, 2048, 5)).not.toBe(key(1, 2048, 4096, 5));
    expect(key(1, 4096, 1024, 5)).not.toBe(key(4, 1024, 1024, 5)); // same pixels, one image vs a batch
  });

  it('times the whole problem when small, else whole images, else the first rows of one', () => {
    expect(sweepSlice({ batch: 3, height: 100, width: 100 }, 1 << 16)).toEqual({ images: 3, height: 100 });
    expect(sweepSlice({ batch: 16, height: 2048, width: 2048 }, 1 << 24)).toEqual({ images: 4, height: 2048 });
    expect(sweepSlice({ batch: 1, height: 8192, width: 8192 }, 1 << 24)).toEqual({ images: 1, height: 2048 });
    expect(sweepSlice({ batch: 1, height: 3, width: 1 << 20 }, 1 << 16)).toEqual({ images: 1, height: 1 });
  });

  it('has at most 16 candidates with unique names, coalesced and both named tiled variants among them', () => {
    expect(CONV2D_CANDIDATES.length).toBeLessThanOrEqual(16);
    expect(new Set(CONV2D_CANDIDATES.map((c) => c.name)).size).toBe(CONV2D_CANDIDATES.length);
    const configs = CONV2D_CANDIDATES.map((c) => JSON.stringify(c.config));
    expect(configs).toContain(JSON.stringify({ kernel: 'coalesced' }));
    expect(configs).toContain(JSON.stringify({ kernel: 'tiled', ...TILED_CONFIG }));
    expect(configs).toContain(JSON.stringify({ kernel: 'tiled', ...COARSENED_CONFIG }));
  });

  it('auto notes say what ran, how it was chosen and what was skipped', () => {
    const c = CONV2D_CANDIDATES.find((x) => x.name === '32x8/2x2')!;
    expect(autoNote({ candidate: c, source: 'sweep', sweepMs: 84.6, timings: {} }, 'KEY', 12, 4, 'GPU timestamps on 4 of 16 images')).toBe(
      "auto: tile 32×8, 2×2 per thread (swept 12 candidates in 85 ms, GPU timestamps on 4 of 16 images; 4 candidates skipped: over this adapter's limits)",
    );
    expect(autoNote({ candidate: CONV2D_CANDIDATES[0]!, source: 'memory' }, 'KEY', 16, 0, '')).toBe('auto: coalesced (no tile) (cached for KEY)');
    expect(autoNote({ candidate: c, source: 'disk' }, 'KEY', 16, 0, '')).toBe('auto: tile 32×8, 2×2 per thread (cached in the tuning file for KEY)');
  });

  it('filters candidates by workgroup memory, invocations and uniform size (never by image size: big grids run in parts)', () => {
    // WebGPU's default limits: 16 KiB of workgroup memory, 256 invocations.
    const base: Conv2dLimits = { workgroupStorage: 16384, invocations: 256, sizeX: 256, sizeY: 256, uniformBytes: 65536 };
    const fit = (k: number, limits = base) => CONV2D_CANDIDATES.filter((c) => whyConv2dConfigCannotRun(c.config, k, limits) === undefined).map((c) => c.name);
    // The three 32×16 tiles need 512 invocations.
    expect(fit(3).filter((n) => n.startsWith('32x16/'))).toEqual([]);
    expect(fit(3)).toHaveLength(13);
    const big = { ...base, invocations: 1024, sizeX: 1024, sizeY: 1024 };
    expect(fit(3, big)).toEqual(CONV2D_CANDIDATES.map((c) => c.name).filter((n) => n !== '32x16/2x4')); // a 66×66 tile is 17 424 bytes
    expect(fit(3, { ...big, workgroupStorage: 32768 })).toHaveLength(16);
    for (const c of CONV2D_CANDIDATES) {
      if (c.config.kernel === 'tiled' && c.config.tile[0] * c.config.tile[1] <= 256) {
        expect(fit(25).includes(c.name)).toBe(conv2dTileBytes(25, c.config) <= 16384);
      }
    }
    expect(fit(129)).toEqual(['coalesced']); // the k² filter no longer fits a 64 KiB uniform
    expect(whyConv2dConfigCannotRun({ kernel: 'tiled', tile: [32, 8], perThread: [4, 1] }, 41, base)).toMatch(/workgroup memory/);
  });
});

describe('every candidate config on the software adapter', () => {
  let gpu: GpuDevice;
  const path = cacheFile();
  // The runner context the backend kit would pass (host output, no signal); cast because the kit may grow fields these runs do not use.
  const ctx = { variant: 'auto', out: undefined, signal: undefined, timing: false, onProgress: undefined } as unknown as OpContext<Float32Array>;
  beforeAll(async () => {
    const opened = await openAdapter('software');
    if ('reasons' in opened) throw new Error(opened.reasons.join('; '));
    gpu = await GpuDevice.open(opened);
  });
  afterAll(() => gpu?.destroy());

  const SHAPES: readonly (readonly [number, number, number])[] = [
    [2, 19, 45], // smaller than most blocks in y, ragged in x
    [1, 67, 130], // several blocks each way, partial ones at the far edges
  ];
  for (const k of [1, 3, 5, 11, 19]) {
    it(`k=${k}: every fitting candidate matches the reference on ${SHAPES.map((s) => s.join('×')).join(' and ')}`, async () => {
      const limits = conv2dLimits(gpu);
      const fitting = CONV2D_CANDIDATES.filter((c) => whyConv2dConfigCannotRun(c.config, k, limits) === undefined);
      // llvmpipe has 32 KiB of workgroup memory and 1024 invocations: every candidate fits.
      expect(fitting).toHaveLength(CONV2D_CANDIDATES.length);
      for (const [b, h, w] of SHAPES) {
        const args = conv2dCase([b, h, w, k], 100 + k);
        const p = validateConv2d(args);
        for (const c of fitting) {
          const msg = verifyResult('conv2d', args, await runConv2dConfig(gpu, p, c.config));
          if (msg !== undefined) expect.fail(`${c.name}, ${b}×${h}×${w}, k=${k}: ${msg}`);
        }
      }
    });
  }

  // convLayer: ragged widths for the pixel tiles (ow % px ≠ 0), maps that fill no tile (5, 16
  // with mt 8 and 16), more channels than one pass of workgroup weights holds (k=7, mt=16: 5),
  // bias and ReLU, batch > 1.
  const LAYERS: readonly (readonly [number, number, number, number, number, number])[] = [
    [3, 1, 12, 13, 4, 3],
    [2, 6, 17, 19, 16, 7],
    [2, 3, 9, 11, 5, 5],
  ];
  for (const shape of LAYERS) {
    it(`convLayer ${shape.join('×')}: every candidate matches the reference`, async () => {
      for (const extras of [{}, { bias: true, relu: true }]) {
        const args = convLayerCase(shape, 7 + shape[5], extras);
        const p = validateConvLayer(args);
        const candidates = convLayerCandidates(gpu, p);
        expect(candidates.filter((c) => c.config.kernel === 'gemm' && (c.config.pixelsPerThread ?? 1) > 1).length).toBeGreaterThan(0);
        for (const c of candidates) {
          const msg = verifyResult('convLayer', args, await runConvLayerConfig(gpu, p, c.config));
          if (msg !== undefined) expect.fail(`${c.name}, ${shape.join('×')} ${JSON.stringify(extras)}: ${msg}`);
        }
      }
    });
  }

  const auto = async (args: Conv2dArgs, op = conv2dOp(gpu, { cachePath: path })) => {
    const res = await op.variants.auto!(validateConv2d(args), ctx);
    expect(verifyResult('conv2d', args, res.data as Float32Array)).toBeUndefined();
    return res.notes ?? [];
  };
  const SWEPT = /^auto: (tile \d+×\d+, \d×\d per thread|coalesced \(no tile\)) \(swept 16 candidates in \d+ ms, wall clock\)$/;

  it('auto sweeps once per shape class, says what it picked, caches it in memory and in the file', async () => {
    const op = conv2dOp(gpu, { cachePath: path });
    const first = await auto(conv2dCase([1, 256, 256, 3], 1), op);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatch(SWEPT);
    const picked = first[0]!.slice(0, first[0]!.indexOf(' ('));
    // Same class (width and pixels in the same power-of-two buckets): no sweep.
    expect(await auto(conv2dCase([1, 260, 300, 3], 2), op)).toEqual([`${picked} (cached for conv2d k=3 w=2^8 px=2^16 batch=1)`]);
    const file = JSON.parse(readFileSync(path, 'utf8'));
    const record = file.adapters[adapterKeyOf(gpu)]['conv2d k=3 w=2^8 px=2^16 batch=1'];
    expect(Object.keys(record.timings)).toHaveLength(16);
    expect(CONV2D_CANDIDATES.find((c) => c.name === record.name)?.config).toEqual(record.config);
  });

  it('a second device on the same cache file reads the pick instead of sweeping', async () => {
    const opened = await openAdapter('software');
    if ('reasons' in opened) throw new Error(opened.reasons.join('; '));
    const gpu2 = await GpuDevice.open(opened);
    try {
      expect(adapterKeyOf(gpu2)).toBe(adapterKeyOf(gpu));
      const res = await conv2dOp(gpu2, { cachePath: path }).variants.auto!(validateConv2d(conv2dCase([1, 256, 256, 3], 3)), ctx);
      expect(res.notes).toHaveLength(1);
      expect(res.notes![0]).toMatch(/^auto: .* \(cached in the tuning file for conv2d k=3 w=2\^8 px=2\^16 batch=1\)$/);
    } finally {
      gpu2.destroy();
    }
  });

  it('auto runs the default without a sweep on tiny problems, and the only fitting candidate untimed', async () => {
    expect(await auto(conv2dCase([1, 20, 30, 5], 5))).toEqual([`auto: tile 32×8, 4×1 per thread (the default below ${SWEEP_MIN_PIXELS} pixels, where a sweep would cost more than any config could save)`]);
    expect(await auto(conv2dCase([2, 20, 30, 1], 5))).toEqual([`auto: coalesced (no tile) (the default below ${SWEEP_MIN_PIXELS} pixels, where a sweep would cost more than any config could save)`]);
    // k=77: no tile fits 32 KiB, so coalesced is the only candidate and nothing is timed.
    expect(await auto(conv2dCase([1, 1, SWEEP_MIN_PIXELS, 77], 6))).toEqual(["auto: coalesced (no tile) (the only candidate within this adapter's limits for k=77)"]);
  });

  it('the backend runs auto by default and reports its pick in the notes', async () => {
    await using backend = await createWebGpuBackend({ adapter: 'software' });
    expect(backend.variants('conv2d')[0]).toBe('auto');
    const args = conv2dCase([2, 128, 256, 5], 7);
    const res = await backend.conv2d(args);
    expect(res.variant).toBe('auto');
    expect(res.notes?.[0]).toMatch(SWEPT);
    expect(verifyResult('conv2d', args, res.data as Float32Array)).toBeUndefined();
  });
});
