import { execFile } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AbortError, InvalidArgumentError, LimitExceededError, WorkerError } from '@kernelkit/core';
import { CS610_DISP_PATH, CS610_GRID_PATH, readCs610Problem, verifyResult, type Backend } from '@kernelkit/ops';
import { conv2dCase, convLayerCase, scanCase, stencilCase } from '@kernelkit/ops/testing';
import { CALLER_SHARE_MAX_WORK, createPiscinaBackend, IN_PLACE_RESULT_MAX_BYTES, DEFAULT_INLINE_BELOW, type PiscinaBackendOptions } from '../src/index.js';
import { lastCallStats, runWorkerTestTask, workerCount } from '../src/testing.js';

const POOL_ONLY = { conv2d: 0, stencil3d: 0, scan: 0, gridSearch: 0, convLayer: 0 };

/** A copy of `a` whose buffer is a SharedArrayBuffer. */
function shared<T extends Float32Array | Float64Array | Uint32Array | Int32Array>(a: T): T {
  const s = new (a.constructor as new (b: SharedArrayBuffer) => T)(new SharedArrayBuffer(a.byteLength));
  s.set(a as never);
  return s;
}

/** Runs a call big enough for the pool under the default thresholds and checks it. */
async function expectUsable(backend: Backend): Promise<void> {
  const args = conv2dCase([2, 512, 256, 9], 3);
  expect(2 * 512 * 256 * 81).toBeGreaterThanOrEqual(DEFAULT_INLINE_BELOW.conv2d);
  const res = await backend.conv2d(args);
  expect(verifyResult('conv2d', args, res.data)).toBeUndefined();
  expect(lastCallStats(backend)?.inline).toBe(false);
}

describe('options', () => {
  const bad: Array<[string, unknown, string]> = [
    ['threads 0', { threads: 0 }, 'options.threads'],
    ['threads negative', { threads: -2 }, 'options.threads'],
    ['threads non-integer', { threads: 1.5 }, 'options.threads'],
    ['threads a string', { threads: '4' }, 'options.threads'],
    ['threads NaN', { threads: Number.NaN }, 'options.threads'],
    ['maxThreads 0', { maxThreads: 0 }, 'options.maxThreads'],
    ['minThreads negative', { minThreads: -1 }, 'options.minThreads'],
    ['minThreads > maxThreads', { minThreads: 4, maxThreads: 2 }, 'options.minThreads'],
    ['unknown option', { thread: 2 }, 'options.thread'],
    ['options not an object', 4, 'options'],
    ['inlineBelow not an object', { inlineBelow: 5 }, 'options.inlineBelow'],
    ['inlineBelow unknown op', { inlineBelow: { fft: 10 } }, 'options.inlineBelow.fft'],
    ['inlineBelow negative', { inlineBelow: { scan: -1 } }, 'options.inlineBelow.scan'],
    ['inlineBelow NaN', { inlineBelow: { conv2d: Number.NaN } }, 'options.inlineBelow.conv2d'],
    ['callerShare not a boolean', { callerShare: 'yes' }, 'options.callerShare'],
  ];
  for (const [what, options, parameter] of bad) {
    it(`${what} → InvalidArgumentError naming ${parameter}`, async () => {
      const err = await createPiscinaBackend(options as PiscinaBackendOptions).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).parameter).toBe(parameter);
    });
  }

  it('defaults to os.availableParallelism() threads and reports itself in info', async () => {
    await using backend = await createPiscinaBackend();
    expect(backend.info).toMatchObject({ name: 'piscina', threads: os.availableParallelism(), software: false, capabilities: { f64: true } });
    expect(backend.info.description).toMatch(/Piscina worker pool, \d+ threads? on /);
    expect(backend.variants('stencil3d')).toEqual(['wasm-simd', 'slabs', 'slabs-per-step']);
    expect(backend.variants('gridSearch')).toEqual(['wasm-simd', 'pruned', 'naive']);
  });

  it('takes minThreads and maxThreads', async () => {
    await using backend = await createPiscinaBackend({ minThreads: 1, maxThreads: 3 });
    expect(backend.info.threads).toBe(3);
    await expectUsable(backend);
  });

  it('runs small calls inline and says so; Infinity keeps everything inline, 0 nothing', async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: { scan: Number.POSITIVE_INFINITY, conv2d: 0 } });
    const big = scanCase('u32', 300_000, 1);
    const res = await backend.scan(big);
    expect(res.notes?.[0]).toMatch(/inline/);
    expect(lastCallStats(backend)?.inline).toBe(true);
    const tiny = conv2dCase([1, 3, 3, 1], 1);
    const r2 = await backend.conv2d(tiny);
    expect(r2.notes).toBeUndefined();
    expect(lastCallStats(backend)?.inline).toBe(false);
    expect(verifyResult('conv2d', tiny, r2.data)).toBeUndefined();
  });
});

describe('worker failures', () => {
  it('a task that throws → WorkerError with the worker error as cause; the pool keeps working', async () => {
    await using backend = await createPiscinaBackend({ threads: 2 });
    const err = await runWorkerTestTask(backend, 'throw').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkerError);
    expect((err as WorkerError).code).toBe('ERR_KERNELKIT_WORKER');
    expect((err as WorkerError).cause).toBeInstanceOf(Error);
    expect(((err as WorkerError).cause as Error).message).toMatch(/deliberate worker failure/);
    await expectUsable(backend);
  });

  it('a worker that exits mid-task → WorkerError; the thread is replaced and the pool keeps working', async () => {
    await using backend = await createPiscinaBackend({ threads: 2 });
    const err = await runWorkerTestTask(backend, 'exit').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkerError);
    expect(((err as WorkerError).cause as Error).message).toMatch(/exited with code/);
    await expectUsable(backend);
    await expectUsable(backend);
    expect(workerCount(backend)).toBe(2);
  });

  it('failures on one backend leave concurrent calls on it intact', async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    const a = conv2dCase([3, 50, 40, 3], 5);
    const s = stencilCase([20, 20, 20, 5, 'copy'], 6);
    const [r1, r2, fail, r3] = await Promise.allSettled([backend.conv2d(a), backend.stencil3d(s), runWorkerTestTask(backend, 'throw'), backend.stencil3d(s)]);
    expect(fail.status).toBe('rejected');
    expect(r1.status === 'fulfilled' && verifyResult('conv2d', a, r1.value.data)).toBeUndefined();
    expect(r2.status === 'fulfilled' && verifyResult('stencil3d', s, r2.value.data)).toBeUndefined();
    expect(r3.status === 'fulfilled' && verifyResult('stencil3d', s, r3.value.data)).toBeUndefined();
  });
});

describe('abort', () => {
  it('stops a running grid search: rejects promptly with AbortError, then the pool is free', async () => {
    await using backend = await createPiscinaBackend({ threads: 2 });
    const full = await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH);
    const ac = new AbortController();
    let progressed = 0;
    const t0 = performance.now();
    // 13^10 points brute force: hours on 2 threads; 128 ranges, each seconds long.
    const run = backend.gridSearch(full, {
      variant: 'naive',
      signal: ac.signal,
      onProgress: () => progressed++,
    });
    setTimeout(() => ac.abort(new Error('user stop')), 200);
    const err = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AbortError);
    expect(((err as AbortError).cause as Error).message).toBe('user stop');
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(progressed).toBe(0);
    // Nothing of the cancelled search is still queued ahead of the next call.
    const t1 = performance.now();
    await expectUsable(backend);
    expect(performance.now() - t1).toBeLessThan(5_000);
  });

  it('aborts a multi-step stencil (barrier participants released), then runs the next one', async () => {
    await using backend = await createPiscinaBackend({ threads: 2 });
    const big = stencilCase([96, 96, 96, 2000, 'copy'], 2);
    const ac = new AbortController();
    const run = backend.stencil3d(big, { signal: ac.signal });
    setTimeout(() => ac.abort(), 150);
    await expect(run).rejects.toBeInstanceOf(AbortError);
    const s = stencilCase([30, 30, 30, 4, 'zero'], 3);
    for (const variant of backend.variants('stencil3d')) {
      const res = await backend.stencil3d(s, { variant });
      expect(verifyResult('stencil3d', s, res.data)).toBeUndefined();
    }
  });

  it("an error thrown by the caller's onProgress rejects the call as it is (not as a WorkerError)", async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    const args = { dims: [{ lower: 0, upper: 40, step: 1 }, { lower: 0, upper: 40, step: 1 }], coefficients: [1, 1], targets: [40], tolerances: [3] };
    const mine = new RangeError('stop reporting');
    const err = await backend.gridSearch(args, { onProgress: () => { throw mine; } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBe(mine);
    await expectUsable(backend);
  });

  it("leaves the caller's ordinary `out` untouched when a call fails midway (written only on success)", async () => {
    await using backend = await createPiscinaBackend({ threads: 2 });
    // ~500 M multiply-adds on the JavaScript kernel: over a second on 2 idle threads (a 250 M
    // case finished before an abort at 800 ms on an idle CI-class machine), so the abort at
    // ~300 ms lands mid-call (wasm-simd would finish this in well under 300 ms).
    const args = conv2dCase([16, 512, 512, 11], 5);
    const out = new Float32Array(args.input.length).fill(7);
    const ac = new AbortController();
    let bands = 0;
    const run = backend.conv2d(args, { out, signal: ac.signal, variant: 'rows' });
    // Abort once some bands are surely done: a call that copied finished bands into `out` early would fail here.
    const t = setInterval(() => {
      if (++bands === 3) ac.abort();
    }, 100);
    await expect(run).rejects.toBeInstanceOf(AbortError);
    clearInterval(t);
    expect(out.every((v) => v === 7)).toBe(true);
    await expectUsable(backend);
  });

  it('maxPoints exceeded on the pool → LimitExceededError, and the pool keeps working', async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    const args = { dims: [{ lower: 0, upper: 100, step: 1 }, { lower: 0, upper: 100, step: 1 }], coefficients: [], targets: [], tolerances: [], maxPoints: 500 };
    await expect(backend.gridSearch(args)).rejects.toBeInstanceOf(LimitExceededError);
    await expect(backend.gridSearch(args, { variant: 'naive' })).rejects.toBeInstanceOf(LimitExceededError);
    const ok = await backend.gridSearch({ ...args, maxPoints: 10_000 });
    expect(ok.data.count).toBe(10_000);
    await expectUsable(backend);
  });

  it('a grid search in many ranges claimed by both threads: points in order, progress in ranges, the maxPoints tally shared', async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    // 16^5 points: 64 ranges; a thin slab passes, spread over most of them.
    const dims = [0, 1, 2, 3, 4].map(() => ({ lower: 0, upper: 16, step: 1 }));
    const args = { dims, coefficients: [1, 2, 1, 1, 1], targets: [40], tolerances: [1.5] };
    for (const variant of backend.variants('gridSearch')) {
      const seen: Array<{ done: number; total: number; unit: string }> = [];
      const r = await backend.gridSearch(args, { variant, onProgress: (e) => seen.push(e) });
      expect(verifyResult('gridSearch', args, r.data), variant).toBeUndefined();
      expect(lastCallStats(backend)?.tasks, variant).toBe(2);
      expect(seen.at(-1), variant).toEqual({ done: 64, total: 64, unit: 'ranges' });
      expect(seen.every((e, i) => i === 0 || e.done > seen[i - 1]!.done), variant).toBe(true);
      // One point too many, wherever the threads find them, is refused; exactly enough is not.
      await expect(backend.gridSearch({ ...args, maxPoints: r.data.count - 1 }, { variant }), variant).rejects.toBeInstanceOf(LimitExceededError);
      expect((await backend.gridSearch({ ...args, maxPoints: r.data.count }, { variant })).data.count, variant).toBe(r.data.count);
    }
    await expectUsable(backend);
  });
});

describe('data path', () => {
  it(`the calling thread takes a share of module-memory conv calls up to ${CALLER_SHARE_MAX_WORK} multiply-adds per thread, unless callerShare is false`, async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    await using workersOnly = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY, callerShare: false });
    const c = conv2dCase([3, 90, 70, 5], 6);
    const l = convLayerCase([9, 2, 30, 26, 6, 5], 7);
    // Just over the bound: 1 × 2048 × 1400 pixels × 49 taps on two threads.
    const big = conv2dCase([1, 2048, 1400, 7], 8);
    expect((2048 * 1400 * 49) / 2).toBeGreaterThan(CALLER_SHARE_MAX_WORK);
    const cases: Array<[string, Backend, () => Promise<{ data: Float32Array }>, string, unknown, boolean]> = [
      ['conv2d', backend, () => backend.conv2d(c), 'conv2d', c, true],
      ['convLayer', backend, () => backend.convLayer(l), 'convLayer', l, true],
      ['convLayer, shared input (per-worker path)', backend, () => backend.convLayer({ ...l, input: shared(l.input) }), 'convLayer', l, false],
      ['conv2d rows (JavaScript)', backend, () => backend.conv2d(c, { variant: 'rows' }), 'conv2d', c, false],
      ['conv2d over the bound', backend, () => backend.conv2d(big), 'conv2d', big, false],
      ['conv2d, callerShare false', workersOnly, () => workersOnly.conv2d(c), 'conv2d', c, false],
      ['convLayer, callerShare false', workersOnly, () => workersOnly.convLayer(l), 'convLayer', l, false],
    ];
    for (const [name, b, call, op, args, caller] of cases) {
      const r = await call();
      expect(verifyResult(op as 'conv2d', args as never, r.data), name).toBeUndefined();
      const stats = lastCallStats(b)!;
      expect(stats.phases!.tasks.filter((t) => t.caller === true), name).toHaveLength(caller ? 1 : 0);
      // One task per thread, at most one per unit: the calling thread's share takes one thread's place.
      const units = stats.phases!.tasks.reduce((a, t) => a + t.units, 0);
      expect(stats.tasks, name).toBe(caller ? 1 : Math.min(2, units));
    }
  });

  it('reports where a pooled conv or chained scan call spent its time, task by task', async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    const c = conv2dCase([3, 90, 70, 5], 6);
    const l = convLayerCase([9, 2, 30, 26, 6, 5], 7);
    const sharedIn = { ...l, input: shared(l.input) };
    const sc = scanCase('u32', 300_000, 1);
    // Ordinary inputs (in place in module memory, the result left there), a shared one (per-worker path), each variant.
    const calls: Array<[string, () => Promise<unknown>, number]> = [
      ['conv2d wasm-simd', () => backend.conv2d(c), 3 * 90],
      ['conv2d rows', () => backend.conv2d(c, { variant: 'rows' }), 3 * 90],
      ['convLayer wasm-simd', () => backend.convLayer(l), 9 * 6],
      ['convLayer shared input', () => backend.convLayer(sharedIn), 9 * 6],
      ['convLayer planes', () => backend.convLayer(l, { variant: 'planes' }), 9 * 6],
      ['scan wasm-simd', () => backend.scan(sc), 300_000],
      ['scan shared input', () => backend.scan({ ...sc, input: shared(sc.input as Uint32Array) }), 300_000],
    ];
    for (const [name, call, work] of calls) {
      await call();
      const stats = lastCallStats(backend)!;
      const p = stats.phases;
      expect(p, name).toBeDefined();
      expect(p!.tasks.filter((t) => t.caller !== true).length, name).toBe(stats.tasks);
      // Clocks of two threads: allow a little skew between the calling thread's and the workers' readings.
      const skew = 1;
      expect(p!.stagedMs, name).toBeGreaterThanOrEqual(0);
      expect(p!.stagedMs, name).toBeLessThanOrEqual(p!.doneMs);
      let units = 0;
      for (const t of p!.tasks) {
        expect(t.startMs, name).toBeGreaterThanOrEqual(-skew);
        expect(t.endMs, name).toBeGreaterThanOrEqual(t.startMs);
        expect(t.endMs, name).toBeLessThanOrEqual(p!.doneMs + skew);
        for (const ms of [t.waitMs, t.kernelMs, t.copyMs]) expect(ms, name).toBeGreaterThanOrEqual(0);
        expect(t.waitMs + t.kernelMs + t.copyMs, name).toBeLessThanOrEqual(t.endMs - t.startMs + 0.01);
        units += t.units;
      }
      // Units are bands of rows, blocks of planes or ranges of a scan: at least one ran, at most one per row, plane or element.
      expect(units, name).toBeGreaterThan(0);
      expect(units, name).toBeLessThanOrEqual(work);
      expect(p!.tasks.reduce((a, t) => a + t.kernelMs, 0), name).toBeGreaterThan(0);
    }
    // Without an \`out\` a module path's result stays where its kernels wrote it: no task copies
    // output, and nothing is copied out; into a shared \`out\` the workers copy their planes.
    await backend.convLayer(l);
    expect(lastCallStats(backend)!.phases!.tasks.every((t) => t.copyMs === 0)).toBe(true);
    expect(lastCallStats(backend)!.copiedOutBytes).toBe(0);
    await backend.convLayer(l, { out: new Float32Array(new SharedArrayBuffer(9 * 6 * 26 * 22 * 4)) });
    expect(lastCallStats(backend)!.phases!.tasks.some((t) => t.copyMs > 0)).toBe(true);

    await backend.scan(sc, { variant: 'two-pass' });
    expect(lastCallStats(backend)?.phases).toBeUndefined();
  });

  it('convLayer units larger than a copy chunk reach the result whole, as the calling thread computes them', async () => {
    // 64² planes: a worker copies every 16 planes (COPY_CHUNK_FLOATS) out of module memory; units of
    // several images of 6 planes end between chunks.
    const l = convLayerCase([40, 2, 68, 68, 6, 5], 11, { bias: true, relu: true });
    await using pooled = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    await using inline = await createPiscinaBackend({ threads: 1, inlineBelow: { ...POOL_ONLY, convLayer: Infinity } });
    const ref = await inline.convLayer(l);
    expect(lastCallStats(inline)?.inline).toBe(true);
    const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    // Only a shared \`out\` has the workers copy output (chunk by chunk) out of module memory.
    const sharedOut = new Float32Array(new SharedArrayBuffer(ref.data.byteLength)).fill(Number.NaN);
    await pooled.convLayer(l, { out: sharedOut });
    expect(lastCallStats(pooled)?.phases?.tasks.some((t) => t.units > 0 && t.copyMs > 0)).toBe(true);
    expect(verifyResult('convLayer', l, sharedOut)).toBeUndefined();
    expect(Buffer.compare(bytes(sharedOut), bytes(ref.data))).toBe(0);
    const res = await pooled.convLayer(l);
    expect(Buffer.compare(bytes(res.data), bytes(ref.data))).toBe(0);
    const out = new Float32Array(res.data.length).fill(Number.NaN);
    await pooled.convLayer(l, { out });
    expect(out).toEqual(ref.data);
  });

  it("hands a module path's result over where the kernels wrote it, untouched by later calls while the caller holds it", async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    const c = conv2dCase([2, 70, 50, 5], 4);
    const l = convLayerCase([9, 2, 30, 26, 6, 5], 7);
    const first = [await backend.conv2d(c), await backend.convLayer(l)] as const;
    expect(lastCallStats(backend)?.copiedOutBytes).toBe(0);
    const kept = first.map((r) => r.data.slice());
    // A view into the call's module memory: the memory (and so the buffer) is larger than the result.
    for (const r of first) expect(r.data.buffer.byteLength).toBeGreaterThan(r.data.byteLength);
    // Calls of the same sizes with other inputs, while the first results are held.
    const c2 = conv2dCase([2, 70, 50, 5], 5);
    const l2 = convLayerCase([9, 2, 30, 26, 6, 5], 8);
    for (let i = 0; i < 6; i++) {
      const [a, b] = [await backend.conv2d(c2), await backend.convLayer(l2)];
      expect(verifyResult('conv2d', c2, a.data)).toBeUndefined();
      expect(verifyResult('convLayer', l2, b.data)).toBeUndefined();
      expect(a.data.buffer).not.toBe(first[0].data.buffer);
    }
    expect(first[0].data).toEqual(kept[0]);
    expect(first[1].data).toEqual(kept[1]);
    expect(verifyResult('conv2d', c, first[0].data)).toBeUndefined();
    expect(verifyResult('convLayer', l, first[1].data)).toBeUndefined();
  });

  it('copies a result out of module memory past IN_PLACE_RESULT_MAX_BYTES (the memory goes back to the pool at once)', async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    // Input and output of 3000² floats: a module memory over the bound.
    const c = conv2dCase([1, 3000, 3000, 3], 6);
    expect(2 * c.input.byteLength).toBeGreaterThan(IN_PLACE_RESULT_MAX_BYTES);
    const res = await backend.conv2d(c);
    expect(res.data.byteOffset).toBe(0);
    // Its own buffer, which the workers copied their rows into.
    expect(res.data.buffer.byteLength).toBe(res.data.byteLength);
    expect(verifyResult('conv2d', c, res.data)).toBeUndefined();
  });

  it('accepts SharedArrayBuffer inputs and outputs as they are (nothing copied)', async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    const c = conv2dCase([2, 70, 50, 5], 4);
    const cs = { ...c, input: shared(c.input), filter: shared(c.filter) };
    const out = new Float32Array(new SharedArrayBuffer(c.input.byteLength));
    const res = await backend.conv2d(cs, { out });
    expect(res.data).toBe(out);
    expect(verifyResult('conv2d', c, out)).toBeUndefined();
    expect(lastCallStats(backend)).toMatchObject({ inline: false, copiedInBytes: 0, copiedOutBytes: 0 });

    const l = convLayerCase([3, 2, 20, 18, 5, 3], 5, { bias: true, relu: true });
    const ls = { ...l, input: shared(l.input), weights: shared(l.weights), bias: shared(l.bias!) };
    const lres = await backend.convLayer(ls);
    expect(verifyResult('convLayer', l, lres.data)).toBeUndefined();
    expect(lastCallStats(backend)?.copiedInBytes).toBe(0);

    for (const steps of [1, 2, 3]) {
      const s = stencilCase([24, 22, 20, steps, 'copy'], steps);
      const sout = new Float32Array(new SharedArrayBuffer(s.input.byteLength));
      const sres = await backend.stencil3d({ ...s, input: shared(s.input as Float32Array) }, { out: sout });
      expect(sres.data).toBe(sout);
      expect(verifyResult('stencil3d', s, sout)).toBeUndefined();
      expect(lastCallStats(backend)).toMatchObject({ copiedInBytes: 0, copiedOutBytes: 0 });
    }

    const sc = scanCase('u32', 500_000, 6, true, 7);
    const inPlace = shared(sc.input as Uint32Array);
    const scres = await backend.scan({ ...sc, input: inPlace }, { out: inPlace });
    expect(scres.data).toBe(inPlace);
    expect(verifyResult('scan', sc, inPlace)).toBeUndefined();
    expect(lastCallStats(backend)).toMatchObject({ copiedInBytes: 0, copiedOutBytes: 0 });
  });

  it('reads and writes shared arrays at any float offset (the wasm kernels line their copies up with them)', async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    const at = (a: Float32Array, offset: number): Float32Array => {
      const s = new Float32Array(new SharedArrayBuffer((a.length + 3) * 4), offset * 4, a.length);
      s.set(a);
      return s;
    };
    for (const offset of [1, 2, 3]) {
      const c = conv2dCase([2, 37, 41, offset === 2 ? 3 : 5], 20 + offset);
      const out = at(new Float32Array(c.input.length), 3 - offset);
      await backend.conv2d({ ...c, input: at(c.input, offset) }, { out });
      expect(verifyResult('conv2d', c, out), `conv2d, input at float ${offset}`).toBeUndefined();
      const l = convLayerCase([3, 2, 21, 19, 5, 3], 30 + offset, { bias: true, relu: false });
      const lout = at(new Float32Array(3 * 5 * 19 * 17), offset);
      await backend.convLayer({ ...l, input: at(l.input, 3 - offset) }, { out: lout });
      expect(verifyResult('convLayer', l, lout), `convLayer, input at float ${3 - offset}`).toBeUndefined();
    }
  });

  it('reuses a pooled module memory across shapes and ops (the zero padding is rewritten when the layout changes)', async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    // Small enough to share one pooled memory; 20 + 2·2 + 8 = 22 + 2·1 + 8, so both conv2d layouts have one row stride.
    const a = conv2dCase([2, 30, 20, 5], 41);
    const b = conv2dCase([2, 30, 22, 3], 42);
    const l = convLayerCase([2, 2, 20, 18, 5, 3], 43, { bias: true, relu: false });
    for (const [op, c] of [['conv2d', a], ['conv2d', b], ['convLayer', l], ['conv2d', a], ['conv2d', a], ['conv2d', b]] as const) {
      const res = op === 'conv2d' ? await backend.conv2d(c as typeof a) : await backend.convLayer(c as typeof l);
      expect(verifyResult(op, c, res.data)).toBeUndefined();
      expect(lastCallStats(backend)?.inline).toBe(false);
    }
    // Ordinary inputs into a caller's shared `out` (at an odd float offset): the workers copy their parts there.
    const out = new Float32Array(new SharedArrayBuffer((a.input.length + 1) * 4), 4, a.input.length);
    expect((await backend.conv2d(a, { out })).data).toBe(out);
    expect(verifyResult('conv2d', a, out)).toBeUndefined();
    const lout = new Float32Array(new SharedArrayBuffer((2 * 5 * 18 * 16 + 1) * 4), 4, 2 * 5 * 18 * 16);
    expect((await backend.convLayer(l, { out: lout })).data).toBe(lout);
    expect(verifyResult('convLayer', l, lout)).toBeUndefined();
    expect(lastCallStats(backend)).toMatchObject({ copiedOutBytes: 0 });
  });

  it('copies ordinary inputs once; results are shared memory the workers write directly, an ordinary out filled in one copy', async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    const c = conv2dCase([1, 64, 64, 3], 8);
    const res = await backend.conv2d(c);
    expect(res.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(verifyResult('conv2d', c, res.data)).toBeUndefined();
    expect(lastCallStats(backend)).toMatchObject({ copiedInBytes: c.input.byteLength + c.filter.byteLength, copiedOutBytes: 0 });
    const l = convLayerCase([3, 2, 20, 18, 5, 3], 5, { bias: true, relu: true });
    const lres = await backend.convLayer(l);
    expect(lres.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(verifyResult('convLayer', l, lres.data)).toBeUndefined();
    expect(lastCallStats(backend)).toMatchObject({ copiedOutBytes: 0 });
    const out = new Float32Array(c.input.length);
    expect((await backend.conv2d(c, { out })).data).toBe(out);
    expect(verifyResult('conv2d', c, out)).toBeUndefined();
    expect(lastCallStats(backend)).toMatchObject({ copiedOutBytes: out.byteLength });
    // Each call gets its own result: two calls of one size never share a buffer.
    const again = await backend.conv2d(c);
    expect(again.data.buffer).not.toBe(res.data.buffer);
    // A result the caller still holds is never handed out again: other data of its size leaves it as it was.
    const other = conv2dCase([1, 64, 64, 3], 9);
    for (let i = 0; i < 3; i++) expect(verifyResult('conv2d', other, (await backend.conv2d(other)).data)).toBeUndefined();
    expect(verifyResult('conv2d', c, res.data)).toBeUndefined();
    for (const steps of [1, 2, 3]) {
      const s = stencilCase([24, 22, 20, steps, 'zero'], steps);
      for (const variant of backend.variants('stencil3d')) {
        const first = await backend.stencil3d(s, { variant });
        const second = await backend.stencil3d(s, { variant });
        expect(second.data.buffer).not.toBe(first.data.buffer);
        expect(verifyResult('stencil3d', s, first.data)).toBeUndefined();
        expect(lastCallStats(backend)).toMatchObject({ copiedInBytes: s.input.byteLength, copiedOutBytes: 0 });
      }
    }
    const sc = scanCase('f32', 200_000, 2);
    const sres = await backend.scan({ ...sc, input: shared(sc.input as Float32Array) });
    expect(verifyResult('scan', sc, sres.data)).toBeUndefined();
    expect(lastCallStats(backend)).toMatchObject({ copiedInBytes: 0, copiedOutBytes: 0 });
    // In place on an ordinary array.
    const inPlace = scanCase('i32', 300_001, 4);
    const copy = inPlace.input.slice();
    await backend.scan(inPlace, { out: inPlace.input });
    expect(verifyResult('scan', { input: copy }, inPlace.input)).toBeUndefined();
  });

  it('splits scans into chunks and keeps integers bit-exact across chunk carries', async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    for (const dtype of ['u32', 'i32', 'f32', 'f64'] as const) {
      const sc = scanCase(dtype, 1_234_567, 9, dtype === 'f64', dtype === 'u32' ? 4_294_967_295 : 0);
      // Two-pass: a task per chunk sum and per local scan, carries through the calling thread.
      const res = await backend.scan(sc, { variant: 'two-pass' });
      expect(verifyResult('scan', sc, res.data)).toBeUndefined();
      expect(lastCallStats(backend)?.tasks).toBeGreaterThan(2);
      // Chained: one task per thread, carries passed between the workers unit by unit, from an
      // ordinary input (module memory) and a shared one (each worker's own memory), both starting
      // off the 16-byte alignment the copies keep.
      const offset = sc.input.subarray(3);
      for (const input of [offset, shared(sc.input).subarray(3)]) {
        const c = { ...sc, input };
        const chained = await backend.scan(c, { variant: 'wasm-simd' });
        expect(verifyResult('scan', c, chained.data)).toBeUndefined();
        const stats = lastCallStats(backend)!;
        expect(stats.tasks).toBe(2);
        expect(stats.phases!.tasks.reduce((a, t) => a + t.units, 0)).toBeGreaterThan(2);
      }
    }
  });

  it('runs many calls of every op concurrently (stencil barriers never deadlock)', async () => {
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY });
    const calls: Array<Promise<string | undefined>> = [];
    for (let i = 0; i < 4; i++) {
      const s = stencilCase([18 + i, 17, 16, 3 + i, i % 2 ? 'copy' : 'zero'], i);
      calls.push(backend.stencil3d(s, { variant: backend.variants('stencil3d')[i % 2]! }).then((r) => verifyResult('stencil3d', s, r.data)));
      const c = conv2dCase([2, 33, 31, 3], i);
      calls.push(backend.conv2d(c).then((r) => verifyResult('conv2d', c, r.data)));
      const sc = scanCase('u32', 100_000 + i, i);
      calls.push(backend.scan(sc).then((r) => verifyResult('scan', sc, r.data)));
    }
    expect(await Promise.all(calls)).toEqual(calls.map(() => undefined));
  });
});

/** Runs test/fixtures/`name` in a child node with `flags`; resolves to its exit code and output. */
function runFixture(name: string, flags: readonly string[], timeout: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [...flags, script], { timeout }, (err, out, errOut) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout: out, stderr: errOut }),
    );
    child.stdin?.end();
  });
}

describe('lifetime', () => {
  // The dispose rule itself (calls in flight finish, later ones are refused) is in lifecycle.test.ts.
  it.each([[[]], [['--max-old-space-size=2048', '--expose-gc', '--stack-trace-limit=20']]])('a process (node flags %j) that creates, uses and disposes a backend exits by itself', async (flags: string[]) => {
    const { code, stdout, stderr } = await runFixture('dispose-exits.mjs', flags, 20_000);
    expect(stderr).toBe('');
    expect(stdout).toBe('disposed\n');
    expect(code).toBe(0);
  });

  // Node refuses process-wide flags in a worker's flag list; the pool finds the list the workers
  // accept by trying, and each refused try leaves a message port open for the life of the process.
  it.each([[[]], [['--max-old-space-size=2048']]])('creating and disposing pools (node flags %j) leaves no message ports behind', async (flags: string[]) => {
    const { code, stdout, stderr } = await runFixture('ports-per-pool.mjs', flags, 60_000);
    expect(code, stderr).toBe(0);
    const { first, last } = JSON.parse(stdout) as { first: number; last: number };
    // 20 more pools: two ports each if they leaked.
    expect(last - first).toBeLessThanOrEqual(2);
  });
});
