import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AbortError } from '@kernelkit/core';
import { validateConvLayer, validateGridSearch, validateStencil3d, verifyResult, type GridSearchArgs, type ScanArray, type StencilBoundary } from '@kernelkit/ops';
import { randomGridCase } from '@kernelkit/ops/testing';
import {
  BAND_BYTES,
  conv2dRowsSimd,
  convLayerPlanesSimd,
  createCpuBackend,
  gridPrunedRange,
  gridPrunedRangeSimd,
  gridPrunedRangesSimd,
  GridSearchSimd,
  prefixCount,
  scanRange,
  scanRangeSimd,
  stencilStepSimd,
  sumInMemory,
  sumRange,
  wasmSupport,
  withKernels,
  WASM_SIMD_ENV,
  relaxedSimdValidates,
  type WasmSupport,
} from '../src/index.js';

function envWithout(name: string): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env[name];
  return env;
}

function random(n: number, seed: number): Float32Array {
  const a = new Float32Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    a[i] = x / 2 ** 31 - 1;
  }
  return a;
}

/** Splits [0, n) into ranges of pseudo-random lengths 1..max. */
function pieces(n: number, max: number, seed: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let x = seed;
  for (let a = 0; a < n; ) {
    x = (x * 48271) % 2147483647;
    const b = Math.min(n, a + 1 + (x % max));
    out.push([a, b]);
    a = b;
  }
  return out;
}

const s = wasmSupport();
const simd: WasmSupport | undefined = 'module' in s ? s : undefined;
// The smallest band each range kernel allows: bands of 3 rows, 1 image, 1 plane.
const TINY_BANDS = 1;

describe.runIf(simd !== undefined)('wasm-simd range kernels, in ragged ranges and tiny bands', () => {
  it('conv2d: widths off the 8-pixel tile, K = 1, K larger than the image, bands crossing images', () => {
    for (const [b, h, w, k] of [
      [1, 1, 1, 1],
      [3, 7, 5, 11],
      [2, 13, 9, 3],
      [1, 33, 31, 7],
      [2, 6, 1, 5],
      [4, 9, 12, 1],
      [1, 5, 70, 9],
    ] as const) {
      const args = { input: random(b * h * w, h * 31 + w), filter: random(k * k, k), batch: b, height: h, width: w, k };
      const out = new Float32Array(b * h * w).fill(Number.NaN);
      withKernels(simd!, (m) => {
        for (const [r0, r1] of pieces(b * h, 6, b + h + w)) conv2dRowsSimd(m, args.input, args.filter, out, h, w, k, r0, r1, TINY_BANDS);
      });
      expect(verifyResult('conv2d', args, out), `${b}×${h}×${w} k=${k}`).toBeUndefined();
    }
  });

  it('convLayer: maps off the 4-map tile, output widths off the 8- and 4-pixel tiles, row ends in 4-row tail tiles, k up to 8 and past it, ranges starting mid-image, bias and ReLU', () => {
    for (const [b, c, h, w, m, k, extras] of [
      [3, 2, 9, 11, 5, 3, { bias: true, relu: true }],
      [2, 1, 7, 7, 1, 7, {}],
      [4, 3, 10, 13, 6, 1, { bias: true }],
      [2, 4, 12, 12, 16, 5, { relu: true }],
      [2, 2, 6, 14, 5, 3, { bias: true }],
      [1, 3, 9, 17, 4, 3, { relu: true }],
      [2, 1, 5, 5, 2, 3, {}],
      [1, 4, 40, 40, 16, 7, { bias: true, relu: true }],
      // Row ends of 1-2 pixels go to tiles of 4 rows: with and without rows left over, alone in a row.
      [2, 3, 11, 11, 6, 3, { bias: true, relu: true }],
      [1, 2, 10, 12, 9, 3, { bias: true }],
      [2, 2, 9, 4, 5, 3, { relu: true }],
      [1, 1, 8, 3, 4, 3, {}],
      [1, 2, 13, 13, 3, 4, { bias: true }],
      // k = 8, the longest row of unrolled taps, and k > 8, rows of taps in a loop; both with row-end tiles.
      [2, 2, 12, 17, 6, 8, { bias: true, relu: true }],
      [1, 2, 14, 18, 5, 9, { bias: true }],
      [2, 1, 16, 21, 4, 11, { relu: true }],
    ] as const) {
      const args = {
        input: random(b * c * h * w, h + m),
        weights: random(m * c * k * k, k + c),
        batch: b,
        channels: c,
        height: h,
        width: w,
        maps: m,
        k,
        ...('bias' in extras ? { bias: random(m, 5) } : {}),
        ...('relu' in extras ? { relu: true } : {}),
      };
      const p = validateConvLayer(args);
      const out = new Float32Array(b * m * p.outHeight * p.outWidth).fill(Number.NaN);
      withKernels(simd!, (kk) => {
        for (const [q0, q1] of pieces(b * m, 7, b * m + k)) convLayerPlanesSimd(kk, p.input, p.weights, p.bias, p.relu, out, p, q0, q1, TINY_BANDS);
      });
      expect(verifyResult('convLayer', args, out), `${b}×${c}×${h}×${w}×${m}×${k}`).toBeUndefined();
    }
  });

  it('stencil3d: one plane per band, f32 and f64, both boundaries', () => {
    for (const [nx, ny, nz, steps, boundary, dtype] of [
      [9, 7, 6, 3, 'zero', 'f32'],
      [5, 6, 11, 2, 'copy', 'f64'],
      [3, 3, 3, 1, 'copy', 'f32'],
      [17, 4, 5, 2, 'zero', 'f64'],
    ] as const) {
      const n = nx * ny * nz;
      const f32 = random(n, nx * ny + nz);
      const input = dtype === 'f32' ? f32 : Float64Array.from(f32);
      const args = { input, nx, ny, nz, steps, boundary: boundary as StencilBoundary };
      const p = validateStencil3d(args);
      let src: Float32Array | Float64Array = input;
      withKernels(simd!, (kk) => {
        for (let t = 0; t < steps; t++) {
          const dst = dtype === 'f32' ? new Float32Array(n) : new Float64Array(n);
          for (const [z0, z1] of pieces(nz, 3, t + nz)) stencilStepSimd(kk, src, dst, nx, ny, nz, p.c0, p.c1, p.boundary, z0, z1, TINY_BANDS);
          src = dst;
        }
      });
      expect(verifyResult('stencil3d', args, src), `${nx}×${ny}×${nz} ${dtype}`).toBeUndefined();
    }
  });
  it('scan: every dtype, inclusive and exclusive, ragged ranges off the vector width, bands of one element, carries across them', () => {
    const n = 203;
    const ints = Uint32Array.from(random(n, 11), (v) => Math.floor((v + 1) * 2 ** 31));
    const inputs: ScanArray[] = [ints, new Int32Array(ints.buffer), random(n, 12), Float64Array.from(random(n, 13), (v) => v * 1e6)];
    for (const input of inputs) {
      const dtype = input instanceof Uint32Array ? 'u32' : input instanceof Int32Array ? 'i32' : input instanceof Float32Array ? 'f32' : 'f64';
      for (const exclusive of [false, true]) {
        for (const bandBytes of [TINY_BANDS, 24, BAND_BYTES]) {
          const initial = dtype === 'u32' ? 4e9 : dtype === 'i32' ? -7 : 0.25;
          const want = new (input.constructor as new (n: number) => ScanArray)(n);
          const got = new (input.constructor as new (n: number) => ScanArray)(n).fill(Number.NaN);
          let a = initial;
          let b = initial;
          withKernels(simd!, (m) => {
            for (const [r0, r1] of pieces(n, 9, bandBytes + n)) {
              a = scanRange(input, want, r0, r1, a, exclusive, dtype);
              b = scanRangeSimd(m, input, got, r0, r1, b, exclusive, dtype, bandBytes);
            }
          });
          const label = `${dtype} exclusive=${exclusive} band=${bandBytes}`;
          if (dtype === 'u32' || dtype === 'i32') {
            expect(Array.from(got), label).toEqual(Array.from(want));
            expect(b, label).toBe(a);
          } else {
            expect(verifyResult('scan', { input, exclusive, initial }, got), label).toBeUndefined();
            expect(Math.abs(b - a), label).toBeLessThan(1e-6 * Math.abs(a) + 1e-9);
          }
        }
      }
    }
  });

  it('sum (the first pass of a parallel scan): every dtype, lengths off the vector width, integers wrapping as sumRange does', () => {
    const ints = Uint32Array.from(random(203, 31), (v) => Math.floor((v + 1) * 2 ** 31));
    const inputs: ScanArray[] = [ints, new Int32Array(ints.buffer), random(203, 32), Float64Array.from(random(203, 33), (v) => v * 1e6)];
    for (const input of inputs) {
      const dtype = input instanceof Uint32Array ? 'u32' : input instanceof Int32Array ? 'i32' : input instanceof Float32Array ? 'f32' : 'f64';
      withKernels(simd!, (m) => {
        for (const [start, end] of [[0, 0], [0, 1], [5, 12], [3, 203], [0, 200]] as const) {
          const n = end - start;
          m.reserve(16 + n * input.BYTES_PER_ELEMENT);
          new (input.constructor as new (b: ArrayBufferLike, o: number, n: number) => ScanArray)(m.buffer, 16, n).set(input.subarray(start, end));
          const got = sumInMemory(m.k, 16, n, dtype);
          const want = sumRange(input, start, end, dtype);
          const label = `${dtype} [${start}, ${end})`;
          if (dtype === 'u32' || dtype === 'i32') expect(got, label).toBe(want);
          else expect(Math.abs(got - want), label).toBeLessThanOrEqual(2 ** -40 * Array.from(input.subarray(start, end)).reduce((a, v) => a + Math.abs(v), 0));
        }
      });
    }
  });

  it('scan: in place (out is the input), from a subarray at an odd element offset', () => {
    const base = random(1001, 21);
    const input = base.subarray(1);
    const want = new Float32Array(1000);
    scanRange(input, want, 0, 1000, 0, false, 'f32');
    withKernels(simd!, (m) => scanRangeSimd(m, input, input, 0, 1000, 0, false, 'f32', 64));
    expect(Array.from(input)).toEqual(Array.from(want));
  });
});

/** The points `kernel` emits for prefixes [start, end) and last-axis indices [lastLo, lastHi), flattened, or 'stopped'. */
function gridPoints(kernel: typeof gridPrunedRange, args: GridSearchArgs, outer: number, start: number, end: number, lastLo = 0, lastHi = Infinity, stopAfter = Infinity): number[] | 'stopped' {
  const p = validateGridSearch(args);
  const pts: number[] = [];
  let n = 0;
  const ok = kernel(p, outer, start, end, (x) => (pts.push(...x), ++n < stopAfter), lastLo, lastHi);
  return ok ? pts : 'stopped';
}

describe.runIf(simd !== undefined)('wasm-simd grid search range kernel', () => {
  const onSimd: typeof gridPrunedRange = (...a) => withKernels(simd!, (w) => gridPrunedRangeSimd(w, ...a));

  it('emits what the JavaScript pruned search emits, in order, for random problems at every prefix depth and in ragged prefix ranges', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const args = randomGridCase(seed);
      const p = validateGridSearch(args);
      for (let outer = 0; outer < p.d; outer++) {
        const n = prefixCount(p, outer);
        const cut = Math.floor(n / 3);
        for (const [start, end] of [[0, n], [cut, n], [0, cut], [cut, cut]]) {
          expect(gridPoints(onSimd, args, outer, start!, end!), `seed ${seed}, outer ${outer}, [${start}, ${end})`).toEqual(gridPoints(gridPrunedRange, args, outer, start!, end!));
        }
      }
    }
  });

  it('laid out once and restarted range by range (gridPrunedRangesSimd), in any order and after a stopped range, emits what fresh searches emit', () => {
    for (let seed = 1; seed <= 150; seed++) {
      const args = randomGridCase(seed);
      const p = validateGridSearch(args);
      for (let outer = 0; outer < p.d; outer++) {
        const n = prefixCount(p, outer);
        const a = Math.floor(n / 4);
        const b = Math.floor((2 * n) / 3);
        withKernels(simd!, (w) => {
          const search = gridPrunedRangesSimd(w, p, outer);
          for (const [start, end, stopAfter] of [[b, n, Infinity], [0, a, 1], [a, b, Infinity], [a, a, Infinity], [0, n, Infinity]] as const) {
            const pts: number[] = [];
            let k = 0;
            const ok = search(start, end, (x) => (pts.push(...x), ++k < stopAfter));
            const want = gridPoints(gridPrunedRange, args, outer, start, end, 0, Infinity, stopAfter);
            expect(ok ? pts : 'stopped', `seed ${seed}, outer ${outer}, [${start}, ${end})`).toEqual(want);
          }
        });
      }
    }
    // Stopped mid-search (19³ points, more than one kernel call's output, deep in the tree), then restarted.
    const many = { dims: [0, 1, 2].map(() => ({ lower: 0, upper: 19, step: 1 })), coefficients: [1, 1, 1], targets: [30], tolerances: [40] };
    withKernels(simd!, (w) => {
      const search = gridPrunedRangesSimd(w, validateGridSearch(many), 0);
      expect(search(0, 1, () => false)).toBe(false);
      const pts: number[] = [];
      expect(search(0, 1, (x) => (pts.push(...x), true))).toBe(true);
      expect(pts).toEqual(gridPoints(gridPrunedRange, many, 0, 0, 1));
      expect(pts.length).toBe(3 * 19 ** 3);
    });
  });

  it('resumes when its output buffer fills: 10 000 passing points, an odd constraint count, and a slice of the last axis', () => {
    const args = { dims: [{ lower: 0, upper: 49, step: 1 }, { lower: -1, upper: 1, step: 0.01 }], coefficients: [1, 0, 0, 1, 1, 1], targets: [25, 0, 25], tolerances: [25, 1, 26] };
    const all = gridPoints(onSimd, args, 1, 0, 50);
    expect(all).toEqual(gridPoints(gridPrunedRange, args, 1, 0, 50));
    expect((all as number[]).length / 2).toBe(50 * 200);
    expect(gridPoints(onSimd, args, 1, 3, 40, 17, 150)).toEqual(gridPoints(gridPrunedRange, args, 1, 3, 40, 17, 150));
  });

  it('runs in steps of any budget to the same points, its position rising to the whole grid', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const args = randomGridCase(seed);
      const p = validateGridSearch(args);
      const want = gridPoints(gridPrunedRange, args, 0, 0, 1);
      for (const budget of [1, 2, 5, 64]) {
        const got: number[] = [];
        const seen: number[] = [];
        withKernels(simd!, (w) => {
          const search = new GridSearchSimd(w, p, 0, 0, 1);
          for (let steps = 0; !search.done; steps++) {
            expect(steps, `seed ${seed}, budget ${budget}: no end in sight`).toBeLessThan(100_000);
            expect(search.run((x) => (got.push(...x), true), budget)).toBe(true);
            seen.push(search.covered());
          }
        });
        expect(got, `seed ${seed}, budget ${budget}`).toEqual(want);
        for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1]!);
        expect(seen.at(-1)).toBe(p.total);
      }
    }
  });

  it('stops when emit asks it to, mid-buffer and at a buffer boundary', () => {
    const args = { dims: [{ lower: 0, upper: 99, step: 1 }, { lower: 0, upper: 99, step: 1 }], coefficients: [], targets: [], tolerances: [] };
    for (const stopAfter of [1, 1024, 1025, 3000]) expect(gridPoints(onSimd, args, 1, 0, 100, 0, Infinity, stopAfter)).toBe('stopped');
  });
});

describe.runIf(simd !== undefined)('wasm-simd variants of the cpu backend', () => {
  it('is the default for every op, with the JavaScript kernels after it', () => {
    const b = createCpuBackend();
    for (const op of ['conv2d', 'convLayer', 'stencil3d'] as const) expect(b.variants(op)).toEqual(['wasm-simd', 'direct']);
    expect(b.variants('scan')).toEqual(['wasm-simd', 'sequential']);
    expect(b.variants('gridSearch')).toEqual(['wasm-simd', 'pruned', 'naive']);
    expect(b.info.description).toMatch(/WebAssembly .*SIMD/);
    void b.dispose();
  });

  it('runs the build KERNELKIT_WASM_SIMD names and says so, else relaxed SIMD where the runtime validates it', () => {
    const asked = process.env[WASM_SIMD_ENV];
    const description = createCpuBackend().info.description;
    if (asked === 'plain' || asked === 'relaxed') {
      expect(simd!.flavour).toBe(asked === 'plain' ? 'simd' : 'relaxed-simd');
      expect(description).toContain(`(${WASM_SIMD_ENV}=${asked}`);
    } else {
      expect(simd!.flavour).toBe(relaxedSimdValidates() ? 'relaxed-simd' : 'simd');
      expect(description).not.toContain(WASM_SIMD_ENV);
    }
  });

  it('runs the JavaScript kernel, and says so, when the filter is not finite', async () => {
    const b = createCpuBackend();
    const args = { input: random(12 * 10, 3), filter: random(9, 4), height: 12, width: 10, k: 3 };
    args.filter[4] = Number.POSITIVE_INFINITY;
    const res = await b.conv2d(args);
    expect(res.variant).toBe('wasm-simd');
    expect(res.notes?.join(' ')).toMatch(/direct \(JavaScript\) kernel/);
    expect(verifyResult('conv2d', args, res.data)).toBeUndefined();
    await b.dispose();
  });

  it('bands a large image so that linear memory stays bounded, and reuses it across calls', async () => {
    const b = createCpuBackend();
    // One 3000² image: 72 MB of input and output, more than one band.
    const n = 3000;
    const args = { input: random(n * n, 9), filter: random(9, 2), height: n, width: n, k: 3 };
    const first = await b.conv2d(args);
    const bytes = withKernels(simd!, (m) => m.bytes);
    expect(bytes).toBeLessThanOrEqual(BAND_BYTES + 65536);
    const again = await b.conv2d(args);
    expect(withKernels(simd!, (m) => m.bytes)).toBe(bytes);
    expect(Buffer.from(again.data.buffer).equals(Buffer.from(first.data.buffer))).toBe(true);
    await b.dispose();
  });

  it("grows an instance's memory without detaching anything: a view taken before still reads it", () => {
    // A detached ArrayBuffer makes V8 run every thread's typed-array code slower from then on.
    withKernels(simd!, (w) => {
      const before = w.f32;
      const length = before.length;
      before[length - 1] = 42;
      w.reserve(w.bytes + 3 * 65536);
      expect(w.bytes).toBeGreaterThanOrEqual(4 * length + 3 * 65536);
      expect(before.length).toBe(length);
      expect(before.buffer.byteLength).toBe(4 * length);
      expect(w.f32[length - 1]).toBe(42);
      expect(() => w.reserve(2 ** 32)).toThrow(RangeError);
    });
  });

  it('checks the signal between bands: an abort stops a long call early', async () => {
    const b = createCpuBackend();
    const args = { input: random(48 * 512 * 512, 5), filter: random(121, 6), batch: 48, height: 512, width: 512, k: 11 };
    const t0 = performance.now();
    await b.conv2d(args);
    const full = performance.now() - t0;
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('stop')), 5);
    const t1 = performance.now();
    await expect(b.conv2d(args, { signal: ac.signal })).rejects.toBeInstanceOf(AbortError);
    expect(performance.now() - t1).toBeLessThan(full / 3);
    await b.dispose();
  });
});

describe('without WebAssembly', () => {
  it('offers only the JavaScript kernels and says why in info', () => {
    // --jitless turns WebAssembly off; the built package is what a user without it would load.
    const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const script = `
      const { createCpuBackend } = await import(${JSON.stringify(entry)});
      const b = createCpuBackend();
      const args = { input: new Float32Array(35).map((_, i) => i % 7), filter: new Float32Array(9).fill(0.5), height: 7, width: 5, k: 3 };
      const res = await b.conv2d(args);
      console.log(JSON.stringify({ variants: b.variants('conv2d'), layer: b.variants('convLayer'), stencil: b.variants('stencil3d'), scan: b.variants('scan'), description: b.info.description, variant: res.variant, centre: res.data[17] }));
      await b.dispose();`;
    const run = spawnSync(process.execPath, ['--jitless', '--input-type=module', '-e', script], { encoding: 'utf8', env: envWithout(WASM_SIMD_ENV) });
    expect(run.status, run.stderr).toBe(0);
    const got = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(got).toMatchObject({ variants: ['direct'], layer: ['direct'], stencil: ['direct'], scan: ['sequential'], variant: 'direct' });
    expect(got.description).toMatch(/JavaScript kernels only \(this runtime has no WebAssembly SIMD\)/);
    // Row 3, column 2 of the 7×5 image: 0.5 × the sum of its 3×3 neighbourhood.
    expect(got.centre).toBe(0.5 * (4 + 5 + 6 + 2 + 3 + 4 + 0 + 1 + 2));
  });
});

describe('KERNELKIT_WASM_SIMD', () => {
  const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  const describeIn = (value: string, flags: string[] = []) => {
    const script = `
      const { createCpuBackend } = await import(${JSON.stringify(entry)});
      try { console.log(JSON.stringify({ description: createCpuBackend().info.description })); }
      catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })); }`;
    const run = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, [WASM_SIMD_ENV]: value } });
    expect(run.status, run.stderr).toBe(0);
    return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, string>;
  };

  it.runIf(simd !== undefined)('plain: the plain build, said in the description', () => {
    expect(describeIn('plain').description).toMatch(/WebAssembly SIMD kernels \(KERNELKIT_WASM_SIMD=plain\)$/);
  });

  it.runIf(simd !== undefined)('relaxed: the fused multiply-add build, turning V8\'s flag on where the runtime ships it off', () => {
    expect(describeIn('relaxed').description).toMatch(/WebAssembly relaxed SIMD \(fused multiply-add\) kernels \(KERNELKIT_WASM_SIMD=relaxed/);
  });

  it('refuses an unknown value and relaxed without WebAssembly, naming the variable', () => {
    expect(describeIn('fast')).toMatchObject({ code: 'ERR_KERNELKIT_INVALID_ARGUMENT', message: expect.stringMatching(/^KERNELKIT_WASM_SIMD: .*plain, relaxed/) });
    expect(describeIn('relaxed', ['--jitless'])).toMatchObject({ code: 'ERR_KERNELKIT_UNSUPPORTED', message: expect.stringMatching(/^KERNELKIT_WASM_SIMD: relaxed asked, but this runtime has no WebAssembly SIMD/) });
  });
});
