/**
 * scan, stencil3d and convLayer into the caller's `out` through the read landing buffer, and
 * their host inputs through the upload landing buffer (runtime/pipeline.ts `hostOutput`,
 * `stageInput`), on the software adapter: `out` equals the fresh result at chunk and slab
 * boundaries (one chunk, several, a ragged last one) with the upload landing on and off; a
 * refused pass, a device lost or an abort in the middle of a call leave `out` untouched; the
 * landing buffers stay bounded; calls without `out` keep their fresh-array path.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AbortError, DeviceError } from '@kernelkit/core';
import { convLayerOutputLength, validateConvLayer, verifyResult, type Backend, type ConvLayerArgs, type ScanArgs, type ScanDtype, type Stencil3dArgs } from '@kernelkit/ops';
import { convLayerCase, scanCase, stencilCase } from '@kernelkit/ops/testing';
import { createWebGpuBackend } from '../src/index.js';
import { setPassHook } from '../src/runtime/device.js';
import { failPass, gpuDeviceOf, landingBytes, setPipelineChunkBytes, setStencilBindingBytes, setUploadLanding, webgpuStats } from '../src/testing.js';

/** Scans of more than 2048 elements run in chunks of 2048. */
const SCAN_CHUNK = 2048;
let b: Backend;
beforeAll(async () => {
  b = await createWebGpuBackend({ adapter: 'software', scanChunkElements: SCAN_CHUNK });
});
afterAll(async () => {
  await b?.dispose();
});
afterEach(() => {
  setUploadLanding(b, undefined);
  setPipelineChunkBytes(b, undefined);
  setStencilBindingBytes(b, undefined);
  setPassHook(gpuDeviceOf(b), undefined);
});

const [NX, NY, NZ] = [9, 7, 11];
const PLANE_BYTES = NX * NY * 4;
/** convLayer images of 2×10×10 (800 input bytes): 3 per chunk at this target, so 7 images run as 3 chunks, the last ragged. */
const LAYER_CHUNK_BYTES = 2400;

/** One op call into `out` or fresh, under the chunking it needs; `fill` is what `out` starts as. */
interface Case {
  readonly name: string;
  readonly length: number;
  readonly ctor: Float32ArrayConstructor | Uint32ArrayConstructor | Int32ArrayConstructor;
  run(options: { out?: ArrayBufferView; timing?: boolean; signal?: AbortSignal }): Promise<{ data: unknown; timing?: { uploadMs?: number; readbackMs?: number } }>;
  check(data: ArrayLike<number>): string | undefined;
}

function scanOf(dtype: Exclude<ScanDtype, 'f64'>, n: number, variant: string, seed: number, exclusive = false): Case {
  const args: ScanArgs = scanCase(dtype, n, seed, exclusive, dtype === 'f32' ? 0.5 : 3);
  const ctor = dtype === 'f32' ? Float32Array : dtype === 'u32' ? Uint32Array : Int32Array;
  return {
    name: `scan ${dtype} n=${n} ${variant}${exclusive ? ' exclusive' : ''}`,
    length: n,
    ctor,
    run: (o) => b.scan(args, { variant, ...o } as never),
    check: (d) => verifyResult('scan', args, d as never),
  };
}

function stencilOf(dims: readonly [number, number, number, number], bindingPlanes: number | undefined, variant: string, seed: number): Case {
  const args: Stencil3dArgs = stencilCase([...dims, 'copy'], seed);
  return {
    name: `stencil3d ${dims.join('×')} ${variant}${bindingPlanes === undefined ? '' : `, ${bindingPlanes} planes per binding`}`,
    length: dims[0] * dims[1] * dims[2],
    ctor: Float32Array,
    run: async (o) => {
      setStencilBindingBytes(b, bindingPlanes === undefined ? undefined : bindingPlanes * dims[0] * dims[1] * 4);
      try {
        return await b.stencil3d(args, { variant, ...o } as never);
      } finally {
        setStencilBindingBytes(b, undefined);
      }
    },
    check: (d) => verifyResult('stencil3d', args, d as never),
  };
}

function layerOf(shape: readonly [number, number, number, number, number, number], chunkBytes: number | undefined, variant: string, seed: number): Case {
  const args: ConvLayerArgs = convLayerCase(shape, seed, { bias: true, relu: seed % 2 === 0 });
  return {
    name: `convLayer ${shape.join('×')} ${variant}${chunkBytes === undefined ? '' : `, chunks of ${chunkBytes} bytes`}`,
    length: convLayerOutputLength(validateConvLayer(args)),
    ctor: Float32Array,
    run: async (o) => {
      setPipelineChunkBytes(b, chunkBytes);
      try {
        return await b.convLayer(args, { variant, ...o } as never);
      } finally {
        setPipelineChunkBytes(b, undefined);
      }
    },
    check: (d) => verifyResult('convLayer', args, d as never),
  };
}

const CASES: readonly Case[] = [
  scanOf('u32', SCAN_CHUNK, 'decoupled', 1),
  scanOf('u32', 3 * SCAN_CHUNK + 77, 'decoupled', 2),
  scanOf('i32', 2 * SCAN_CHUNK + 1, 'reduce-then-scan', 3, true),
  scanOf('f32', 2 * SCAN_CHUNK + 500, 'blelloch', 4),
  scanOf('f32', 1000, 'decoupled', 5, true),
  stencilOf([NX, NY, NZ, 3], undefined, 'streamed', 6),
  stencilOf([NX, NY, NZ, 3], 5, 'naive', 7),
  stencilOf([NX, NY, NZ, 2], 4, 'tiled', 8),
  layerOf([7, 2, 10, 10, 3, 3], undefined, 'gemm', 9),
  layerOf([7, 2, 10, 10, 3, 3], LAYER_CHUNK_BYTES, 'gemm', 10),
  layerOf([5, 2, 10, 10, 4, 3], LAYER_CHUNK_BYTES, 'direct', 11),
];

/** Handle releases and failed calls settle on the device's queue: a call after them sees the pool settled. */
async function outstanding(): Promise<number> {
  await b.stencil3d({ input: new Float32Array(1), nx: 1, ny: 1, nz: 1, steps: 1 });
  return webgpuStats(b).outBuffers;
}

const refusal = (p: Promise<unknown>): Promise<unknown> => p.then(() => 'resolved', (e: unknown) => e);

describe('into out through the landing buffer', () => {
  it('every op equals its fresh result (one chunk, several, ragged last chunk, slabs) with the upload landing off and on', async () => {
    for (const c of CASES) {
      const fresh = (await c.run({})).data as ArrayLike<number>;
      expect(c.check(fresh), c.name).toBeUndefined();
      for (const landing of [false, true]) {
        setUploadLanding(b, landing);
        const out = new c.ctor(c.length).fill(7);
        const r = await c.run({ out, timing: true });
        expect(r.data, c.name).toBe(out);
        expect(out, `${c.name}, upload landing ${landing ? 'on' : 'off'}`).toEqual(fresh);
        expect(r.timing?.readbackMs, c.name).toBeGreaterThan(0);
        expect(r.timing?.uploadMs, c.name).toBeGreaterThan(0);
        // The fresh path too, with its input staged the other way.
        expect((await c.run({})).data, `${c.name}, fresh, upload landing ${landing ? 'on' : 'off'}`).toEqual(fresh);
      }
      setUploadLanding(b, undefined);
    }
    expect(landingBytes(b)).toBeGreaterThan(0);
    expect(await outstanding()).toBe(0);
  });

  it('a DeviceArray input into out: scan in chunks, stencil3d of zero steps and in slabs', async () => {
    const scanArgs = scanCase('u32', 2 * SCAN_CHUNK + 9, 21);
    const grid = stencilCase([NX, NY, NZ, 2, 'zero'], 22);
    const scanIn = (await b.scan({ input: scanArgs.input, exclusive: true, initial: 0 }, { output: 'device' })).data;
    const gridIn = (await b.stencil3d({ ...grid, steps: 0 }, { output: 'device' })).data;
    try {
      // An exclusive scan from 0 of the input then an inclusive scan of that: the second scan's input is the first's device output.
      const first = (await b.scan({ input: scanArgs.input, exclusive: true, initial: 0 })).data as Uint32Array;
      const want = (await b.scan({ input: first, exclusive: false, initial: 0 })).data as Uint32Array;
      const out = new Uint32Array(first.length).fill(7);
      await b.scan({ input: scanIn, exclusive: false, initial: 0 }, { out });
      expect(out).toEqual(want);
      const copy = new Float32Array(NX * NY * NZ).fill(7);
      await b.stencil3d({ ...grid, input: gridIn, steps: 0 }, { out: copy });
      expect(copy).toEqual(grid.input);
      setStencilBindingBytes(b, 4 * PLANE_BYTES);
      const slabbed = new Float32Array(NX * NY * NZ).fill(7);
      await b.stencil3d({ ...grid, input: gridIn }, { out: slabbed });
      expect(verifyResult('stencil3d', grid, slabbed)).toBeUndefined();
    } finally {
      scanIn.dispose();
      gridIn.dispose();
    }
    expect(await outstanding()).toBe(0);
  });

  it('a refused pass, a device lost on the last pass, or an abort leave out untouched; the next call fills it', async () => {
    const gpu = gpuDeviceOf(b);
    for (const c of CASES.filter((_, i) => i % 2 === 1)) {
      for (const landing of [false, true]) {
        setUploadLanding(b, landing);
        const name = `${c.name}, upload landing ${landing ? 'on' : 'off'}`;
        // How many passes the call makes, so that the failures land on its last one (earlier chunks already in the landing buffer).
        let passes = 0;
        setPassHook(gpu, (d) => (passes++, d));
        await c.run({ out: new c.ctor(c.length) });
        setPassHook(gpu, undefined);
        const out = new c.ctor(c.length).fill(9);
        failPass(b, passes);
        expect(await refusal(c.run({ out })), name).toBeInstanceOf(DeviceError);
        expect(out.every((v) => v === 9), `${name}: refused pass`).toBe(true);
        let seen = 0;
        setPassHook(gpu, (d) => {
          if (++seen === passes) {
            setPassHook(gpu, undefined);
            gpu.device.destroy();
          }
          return d;
        });
        const lost = await refusal(c.run({ out }));
        expect(lost, name).toBeInstanceOf(DeviceError);
        expect((lost as Error).message).toMatch(/device was lost during this call/);
        expect(out.every((v) => v === 9), `${name}: device lost`).toBe(true);
        expect(landingBytes(b)).toBe(0);
        const ac = new AbortController();
        let aborted = 0;
        setPassHook(gpu, (d) => {
          if (++aborted === passes) ac.abort();
          return d;
        });
        expect(await refusal(c.run({ out, signal: ac.signal })), name).toBeInstanceOf(AbortError);
        setPassHook(gpu, undefined);
        expect(out.every((v) => v === 9), `${name}: aborted`).toBe(true);
        const r = await c.run({ out });
        expect(r.data).toBe(out);
        expect(c.check(out), name).toBeUndefined();
      }
    }
    expect(await outstanding()).toBe(0);
  });

  it('the landing buffers stay bounded over many calls of every op into out', async () => {
    setUploadLanding(b, true);
    const outs = CASES.map((c) => new c.ctor(c.length));
    const round = async (): Promise<void> => {
      for (let i = 0; i < CASES.length; i++) await CASES[i]!.run({ out: outs[i]! });
    };
    await round();
    const largest = landingBytes(b);
    const live = webgpuStats(b).liveBuffers;
    for (let i = 0; i < 5; i++) {
      await round();
      expect(landingBytes(b)).toBeLessThanOrEqual(largest);
    }
    expect(webgpuStats(b).liveBuffers).toBeLessThanOrEqual(live);
    CASES.forEach((c, i) => expect(c.check(outs[i]!), c.name).toBeUndefined());
    expect(await outstanding()).toBe(0);
  });
});

describe('calls without out', () => {
  it('read back into fresh arrays without a landing buffer; with the upload landing on, only their input is staged there', async () => {
    await using fresh = await createWebGpuBackend({ adapter: 'software', scanChunkElements: SCAN_CHUNK });
    const scan = scanCase('u32', 3 * SCAN_CHUNK + 5, 31);
    const grid = stencilCase([NX, NY, NZ, 2, 'zero'], 32);
    const layer = convLayerCase([7, 2, 10, 10, 3, 3], 33);
    const calls = [() => fresh.scan(scan), () => fresh.stencil3d(grid), () => fresh.convLayer(layer)];
    const results = [];
    for (const call of calls) results.push((await call()).data);
    expect(landingBytes(fresh)).toBe(0);
    setUploadLanding(fresh, true);
    for (const [i, call] of calls.entries()) {
      const r = (await call()).data;
      expect(r).toEqual(results[i]);
      expect(r).not.toBe(results[i]);
    }
    // The upload landing buffer alone, as large as the largest recent input (the scan's, page-rounded): no read landing buffer.
    expect(landingBytes(fresh)).toBe(Math.ceil(scan.input.byteLength / 4096) * 4096);
    expect(verifyResult('scan', scan, results[0] as Uint32Array)).toBeUndefined();
  });
});
