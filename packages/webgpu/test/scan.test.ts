import { afterAll, describe, expect, it } from 'vitest';
import { AbortError, DisposedError, InvalidArgumentError, UnsupportedError } from '@kernelkit/core';
import { scanReference, validateScan, verifyResult, type ScanArray, type ScanDtype } from '@kernelkit/ops';
import { scanCase, scanInput } from '@kernelkit/ops/testing';
import { createWebGpuBackend, webgpuScanStream } from '../src/index.js';
import { scanWithConfig } from '../src/ops/scan.js';
import { decoupledConfig, decoupledVecScan, tileElements, type DecoupledConfig } from '../src/ops/scan-decoupled.js';
import { scanStreamOnDevice } from '../src/ops/scan-stream.js';
import { deviceOf } from '../src/runtime/registry.js';
import { liveGpuBuffers } from '../src/testing.js';

// One software backend for the whole file, disposed by the last test. (Creating and disposing
// a second software device while one is alive crashed the process now and then: futex errors,
// segfaults, std::system_error; see the report. So no test here makes a second one.)
const backendP = createWebGpuBackend({ adapter: 'software' });
afterAll(async () => (await backendP).dispose());
// The kernel sweeps run on its device directly.
const device = async () => {
  const b = await backendP;
  return { b, gpu: deviceOf(b) };
};

const INITIAL: Record<Exclude<ScanDtype, 'f64'>, number> = { u32: 4_000_000_000, i32: -123_456, f32: 2.5 };
const DTYPES = ['u32', 'i32', 'f32'] as const;

async function expectConfigConforms(cfg: DecoupledConfig, lengths: readonly number[], chunkLimit?: number): Promise<void> {
  const { gpu } = await device();
  let seed = 1;
  for (const n of lengths) {
    for (const dtype of DTYPES) {
      // Alternate inclusive / exclusive-with-carry so both meet every length and dtype across the sweep.
      const exclusive = (n + seed) % 2 === 1;
      const args = scanCase(dtype, n, seed++, exclusive, exclusive ? INITIAL[dtype] : 0);
      const res = await scanWithConfig(gpu, validateScan(args), cfg, chunkLimit === undefined ? {} : { chunkLimit });
      const msg = verifyResult('scan', args, res.data as ScanArray);
      if (msg !== undefined) expect.fail(`${JSON.stringify(cfg)} ${dtype} n=${n} exclusive=${exclusive}: ${msg}`);
    }
  }
}

const around = (tile: number): number[] => [1, 5, tile - 1, tile, tile + 1, 3 * tile + 7];

describe('vectorised decoupled scan kernel', () => {
  it('uses subgroup builtins only for decoupled-subgroups on a device that has them', () => {
    expect(decoupledConfig({ subgroups: true }, 'subgroups').subgroups).toBe('native');
    expect(decoupledConfig({ subgroups: false }, 'subgroups').subgroups).toBe(32);
    expect(decoupledConfig({ subgroups: true }, 'wg').subgroups).toBe(32);
    const native = decoupledVecScan('u32', decoupledConfig({ subgroups: true }, 'subgroups')).wgsl;
    expect(native.startsWith('enable subgroups;')).toBe(true);
    expect(native).toContain('subgroupExclusiveAdd(t3)');
    expect(decoupledVecScan('u32', decoupledConfig({ subgroups: true }, 'wg')).wgsl).not.toMatch(/subgroup[A-Z]|enable subgroups/);
  });

  // Software subgroups of 4…128 lanes (the sizes real ones have) and 256 (one per workgroup), with 1–8 vec4 per invocation.
  for (const [es, vecs] of [
    [4, 1],
    [8, 8],
    [16, 2],
    [64, 4],
    [128, 1],
    [256, 2],
  ] as const) {
    it(`software subgroups of ${es}, ${vecs} vec4 per invocation (tile ${tileElements({ vecs })}): u32/i32/f32, around tile edges`, async () => {
      await expectConfigConforms({ vecs, subgroups: es, window: 32, spin: 1024 }, around(tileElements({ vecs })));
    });
  }

  // Workgroups of 128 and 512 invocations, tiles by ticket and by workgroup id (the H100 defaults' shapes).
  for (const [wg, ticket] of [
    [128, true],
    [512, false],
  ] as const) {
    it(`software subgroups of 32, ${wg} invocations, tiles by ${ticket ? 'ticket' : 'workgroup id'}`, async () => {
      await expectConfigConforms({ vecs: 4, wg, subgroups: 32, window: 32, spin: 1024, ticket }, around(tileElements({ vecs: 4, wg })));
    });
  }

  it('native subgroups, when this adapter has them', async () => {
    const { gpu } = await device();
    if (!gpu.subgroups) return; // llvmpipe has none; a hardware adapter runs the sweep
    for (const vecs of [1, 4]) await expectConfigConforms({ vecs, subgroups: 'native', window: 32, spin: 1024 }, around(tileElements({ vecs })));
    await expectConfigConforms(decoupledConfig(gpu, 'subgroups'), around(tileElements(decoupledConfig(gpu, 'subgroups'))));
  });

  it('look-back windows of 1 and 3 predecessors with every prefix rebuilt by the fallback (nothing published)', async () => {
    for (const window of [1, 3]) await expectConfigConforms({ vecs: 1, subgroups: 32, window, spin: 0, publish: 'none' }, [1, 1025, 9 * 1024 + 5]);
  });

  it('look-back windows of 1, 3 and 32 summing aggregates down to tile 0 (no inclusive prefix published past it)', async () => {
    for (const window of [1, 3, 32]) await expectConfigConforms({ vecs: 1, subgroups: 8, window, spin: 1024, publish: 'aggregates' }, [2049, 40 * 1024 + 11]);
  });

  it('a window of 1 with publishing and an immediate fallback on any missing predecessor', async () => {
    await expectConfigConforms({ vecs: 1, subgroups: 16, window: 1, spin: 0 }, [7 * 1024 + 3]);
  });

  it('tiles numbered by workgroup id instead of an atomic ticket', async () => {
    await expectConfigConforms({ vecs: 1, subgroups: 32, window: 32, spin: 64, ticket: false }, [1, 3 * 1024 + 1, 20 * 1024 + 7]);
  });

  it('chunks of 2.5 tiles (carry across chunk boundaries)', async () => {
    await expectConfigConforms({ vecs: 4, subgroups: 32, window: 32, spin: 1024 }, [4 * 4096 + 9, 25_000], 10_240);
  });
});

describe('scan variants of the backend', () => {
  it('lists decoupled (default) and decoupled-subgroups', async () => {
    const { b } = await device();
    expect(b.variants('scan').slice(0, 2)).toEqual(['decoupled', 'decoupled-subgroups']);
  });

  for (const variant of ['decoupled', 'decoupled-subgroups']) {
    it(`${variant}: 50 001 elements, inclusive and exclusive with a carry-in, whole and in chunks of 10 240`, async () => {
      const { b, gpu } = await device();
      for (const dtype of DTYPES) {
        for (const exclusive of [false, true]) {
          const args = scanCase(dtype, 50_001, 3, exclusive, exclusive ? INITIAL[dtype] : 0);
          const res = await b.scan(args, { variant });
          expect(verifyResult('scan', args, res.data)).toBeUndefined();
          // Without the feature decoupled-subgroups says that it ran the workgroup-memory form.
          const fellBack = variant === 'decoupled-subgroups' && !gpu.subgroups;
          expect(res.notes?.some((n) => n.includes("no 'subgroups' feature")) ?? false).toBe(fellBack);
          // The backend's chunking (scanChunkElements) with the same kernel: the carry crosses chunks on the host.
          const chunked = await scanWithConfig(gpu, validateScan(args), decoupledConfig(gpu, variant === 'decoupled' ? 'wg' : 'subgroups'), { chunkLimit: 10_240 });
          expect(verifyResult('scan', args, chunked.data as ScanArray)).toBeUndefined();
        }
      }
    });
  }
});

/** Chunks of `sizes` cut from one random array of `dtype`. */
function chunksOf(dtype: Exclude<ScanDtype, 'f64'>, sizes: readonly number[], seed: number): { all: ScanArray; chunks: ScanArray[] } {
  const all = scanInput(dtype, sizes.reduce((a, s) => a + s, 0), seed);
  const chunks: ScanArray[] = [];
  let o = 0;
  for (const s of sizes) {
    chunks.push(all.slice(o, o + s));
    o += s;
  }
  return { all, chunks };
}

async function collect(stream: AsyncIterable<ScanArray>): Promise<ScanArray[]> {
  const outs: ScanArray[] = [];
  for await (const o of stream) outs.push(o);
  return outs;
}

function concat(like: ScanArray, parts: readonly ScanArray[]): ScanArray {
  const out = new (like.constructor as new (n: number) => ScanArray)(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** The outputs have the chunks' lengths and types, and together they are the scan of the concatenation (u32: bit-exact). */
function expectStreamed(all: ScanArray, chunks: readonly ScanArray[], outs: readonly ScanArray[], exclusive: boolean, initial: number): void {
  expect(outs.map((o) => o.length)).toEqual(chunks.map((c) => c.length));
  for (const o of outs) expect(o.constructor).toBe(all.constructor);
  const got = concat(all, outs);
  if (all instanceof Uint32Array) {
    const want = scanReference(validateScan({ input: all, exclusive, initial }));
    const bad = want.findIndex((w, i) => got[i] !== w);
    expect(bad, bad < 0 ? '' : `[${bad}] got ${got[bad]}, expected ${want[bad]}`).toBe(-1);
  } else expect(verifyResult('scan', { input: all, exclusive, initial }, got)).toBeUndefined();
}

// Uneven sizes: empty chunks, single elements, exact and off-by-one tiles, several tiles.
const SIZES = [5, 0, 4096, 1, 10_000, 0, 0, 77_777, 3, 4097, 30_001, 9, 0];

describe('webgpuScanStream', () => {
  for (const dtype of DTYPES) {
    it(`${dtype}: ${SIZES.length} uneven chunks (empty ones too), inclusive and exclusive with a carry-in`, async () => {
      const { b } = await device();
      const { all, chunks } = chunksOf(dtype, SIZES, 7);
      for (const exclusive of [false, true]) {
        const initial = exclusive ? INITIAL[dtype] : 0;
        expectStreamed(all, chunks, await collect(webgpuScanStream(b, chunks, { exclusive, initial })), exclusive, initial);
      }
    });
  }

  it('decoupled-subgroups where the adapter has them (else UnsupportedError naming options.variant)', async () => {
    const { b, gpu } = await device();
    const { all, chunks } = chunksOf('u32', SIZES, 9);
    const stream = collect(webgpuScanStream(b, chunks, { variant: 'decoupled-subgroups' }));
    if (gpu.subgroups) expectStreamed(all, chunks, await stream, false, 0);
    else {
      const e = await stream.then(() => undefined, (x: unknown) => x as UnsupportedError);
      expect(e).toBeInstanceOf(UnsupportedError);
      expect(e?.parameter).toBe('options.variant');
    }
  });

  it('an async source, and chunks split into pieces of 1000 with 1, 2 and 3 buffer sets', async () => {
    const { b, gpu } = await device();
    const { all, chunks } = chunksOf('u32', SIZES, 8);
    async function* gen(): AsyncGenerator<ScanArray> {
      for (const c of chunks) {
        await new Promise((r) => setTimeout(r, 1));
        yield c;
      }
    }
    expectStreamed(all, chunks, await collect(webgpuScanStream(b, gen(), { variant: 'decoupled', exclusive: true, initial: 1 })), true, 1);
    for (const sets of [1, 2, 3]) expectStreamed(all, chunks, await collect(scanStreamOnDevice(gpu, chunks, { initial: 99 }, { sets, maxPieceElements: 1000 })), false, 99);
  });

  it('an empty source yields nothing; empty chunks yield empty arrays of their type', async () => {
    const { b } = await device();
    expect(await collect(webgpuScanStream(b, []))).toEqual([]);
    const outs = await collect(webgpuScanStream(b, [new Int32Array(0), new Int32Array(0)], { initial: -4 }));
    expect(outs.map((o) => [o.constructor, o.length])).toEqual([
      [Int32Array, 0],
      [Int32Array, 0],
    ]);
  });

  it('refuses bad chunks and options naming the parameter', async () => {
    const { b } = await device();
    const reject = (p: AsyncIterable<ScanArray>) => collect(p).then(
      () => undefined,
      (e: unknown) => e as Error & { parameter?: string },
    );
    const mixed = await reject(webgpuScanStream(b, [new Uint32Array(3), new Uint32Array(2), new Float32Array(2)]));
    expect(mixed).toBeInstanceOf(InvalidArgumentError);
    expect(mixed?.parameter).toBe('chunks[2]');
    const f64 = await reject(webgpuScanStream(b, [new Float64Array(4)]));
    expect(f64).toBeInstanceOf(UnsupportedError);
    expect(f64?.parameter).toBe('chunks[0]');
    expect((await reject(webgpuScanStream(b, [new Uint8Array(4) as never])))?.parameter).toBe('chunks[0]');
    for (const [options, parameter] of [
      [{ initial: -1 }, 'options.initial'],
      [{ initial: 0.5 }, 'options.initial'],
      [{ exclusive: 'yes' }, 'options.exclusive'],
      [{ variant: 'nope' }, 'options.variant'],
      [{ signal: 'stop' }, 'options.signal'],
    ] as const) {
      const e = await reject(webgpuScanStream(b, [new Uint32Array(3)], options as never));
      expect(e, JSON.stringify(options)).toBeInstanceOf(InvalidArgumentError);
      expect(e?.parameter).toBe(parameter);
    }
    const hostCarry = await reject(webgpuScanStream(b, [new Uint32Array(3)], { variant: 'blelloch' }));
    expect(hostCarry).toBeInstanceOf(UnsupportedError);
    expect(hostCarry?.parameter).toBe('options.variant');
    expect((await reject(webgpuScanStream(b, 42 as never)))?.parameter).toBe('source');
    expect((await reject(webgpuScanStream({} as never, [new Uint32Array(3)])))?.parameter).toBe('backend');
  });

  it('abort mid-stream rejects with AbortError, returns the source and releases the buffers', async () => {
    const { b } = await device();
    const before = liveGpuBuffers(b);
    const ac = new AbortController();
    let returned = false;
    async function* source(): AsyncGenerator<Uint32Array> {
      try {
        for (let i = 0; ; i++) yield new Uint32Array(5000).fill(i);
      } finally {
        returned = true;
      }
    }
    const stream = webgpuScanStream(b, source(), { signal: ac.signal });
    const first = await stream.next();
    expect(first.value?.[4999]).toBe(0);
    const second = await stream.next();
    expect(second.value?.[0]).toBe(1); // the carry (0) plus the chunk's first element
    ac.abort(new Error('enough'));
    await expect(stream.next()).rejects.toBeInstanceOf(AbortError);
    expect(returned).toBe(true);
    expect(liveGpuBuffers(b)).toBe(before);
    // The device is fine afterwards.
    const args = scanCase('u32', 9000, 4);
    expect(verifyResult('scan', args, (await b.scan(args)).data)).toBeUndefined();
  });

  it('abort while the source is still producing rejects at once', async () => {
    const { b } = await device();
    const before = liveGpuBuffers(b);
    const ac = new AbortController();
    const stalled: AsyncIterable<Uint32Array> = {
      [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<Uint32Array>>(() => {}) }),
    };
    const pending = collect(webgpuScanStream(b, stalled, { signal: ac.signal }));
    setTimeout(() => ac.abort(), 20);
    await expect(pending).rejects.toBeInstanceOf(AbortError);
    expect(liveGpuBuffers(b)).toBe(before);
  });

  it('an error thrown by the source propagates as is, and the buffers are released', async () => {
    const { b } = await device();
    const before = liveGpuBuffers(b);
    const boom = new Error('source failed');
    function* source(): Generator<Float32Array> {
      yield new Float32Array(3000).fill(0.5);
      yield new Float32Array(7000).fill(0.25);
      throw boom;
    }
    const outs: ScanArray[] = [];
    await expect(
      (async () => {
        for await (const o of webgpuScanStream(b, source())) outs.push(o);
      })(),
    ).rejects.toBe(boom);
    expect(outs.length).toBeLessThanOrEqual(2);
    expect(liveGpuBuffers(b)).toBe(before);
  });

  it('a consumer that stops early returns the source and releases the buffers', async () => {
    const { b } = await device();
    const before = liveGpuBuffers(b);
    let returned = false;
    function* source(): Generator<Uint32Array> {
      try {
        for (;;) yield new Uint32Array(4100).fill(1);
      } finally {
        returned = true;
      }
    }
    let seen = 0;
    for await (const o of webgpuScanStream(b, source())) {
      expect(o[4099]).toBe(4100 * (seen + 1));
      if (++seen === 3) break;
    }
    expect(returned).toBe(true);
    expect(liveGpuBuffers(b)).toBe(before);
  });

  // Last: disposes the file's backend.
  it('a disposed backend is refused with DisposedError', async () => {
    const { b } = await device();
    await b.dispose();
    await expect(collect(webgpuScanStream(b, [new Uint32Array(3)]))).rejects.toBeInstanceOf(DisposedError);
  });
});
