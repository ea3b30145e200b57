import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceError } from '@kernelkit/core';
import { conv2dOutputLength, validateConv2d, convLayerOutputLength, convLayerOutputShape, verifyResult, type Backend, type Conv2dArgs, type ConvLayerArgs, type Stencil3dArgs } from '@kernelkit/ops';
import { conv2dCase, convLayerCase, scanCase, stencilCase } from '@kernelkit/ops/testing';
import { createWebGpuBackend } from '../src/index.js';
import { CONV2D_CANDIDATES } from '../src/ops/conv2d.js';
import { conv2dBlock, COARSENED_CONFIG, TILED_CONFIG } from '../src/ops/conv2d.wgsl.js';
import { STREAMED, TILED } from '../src/ops/stencil3d.wgsl.js';
import { deviceLimits, failPass, webgpuStats } from '../src/testing.js';

/**
 * Shapes whose grids need more than maxComputeWorkgroupsPerDimension workgroups in one
 * dimension, on each variant they used to fail on, each the smallest that crosses the limit for
 * the variant's workgroup (so the test stays quick on llvmpipe). Every case asserts that it
 * really crosses the limit, so a change of tile sizes cannot make it stop covering the split.
 */

let b: Backend;
let limit: number;
beforeAll(async () => {
  b = await createWebGpuBackend({ adapter: 'software' });
  limit = deviceLimits(b)['maxComputeWorkgroupsPerDimension']!;
});
afterAll(async () => {
  await b?.dispose();
});

const layerLength = (a: ConvLayerArgs): number => convLayerOutputLength({ ...a, ...convLayerOutputShape(a) });

/** Buffers handed out to a call and never given back: must be 0 between calls. */
const outstanding = (): number => {
  return webgpuStats(b).outBuffers;
};

/** Runs `call` without and with `out` (filled with a sentinel first); both must match the f64 reference. */
async function bothWays<O extends 'conv2d' | 'stencil3d' | 'convLayer'>(op: O, args: O extends 'conv2d' ? Conv2dArgs : O extends 'stencil3d' ? Stencil3dArgs : ConvLayerArgs, length: number, variant: string): Promise<void> {
  const call = (options: object) => (b[op] as (a: unknown, o: object) => Promise<{ data: Float32Array }>).call(b, args, { variant, ...options });
  const plain = await call({});
  expect(verifyResult(op, args as never, plain.data as never), `${op}/${variant} without out`).toBeUndefined();
  const out = new Float32Array(length).fill(-12345.5);
  const given = await call({ out });
  expect(given.data).toBe(out);
  expect(verifyResult(op, args as never, out as never), `${op}/${variant} with out`).toBeUndefined();
  expect(outstanding()).toBe(0);
}

describe('conv2d past the per-dimension workgroup limit', () => {
  const rowsPerGroup = { coalesced: 8, tiled: conv2dBlock(TILED_CONFIG)[1], coarsened: conv2dBlock(COARSENED_CONFIG)[1] } as const;
  for (const variant of ['coalesced', 'tiled', 'coarsened'] as const) {
    it(`${variant}: one column of rowsPerGroup·limit + 1 rows (K=1) matches the reference, with and without out`, async () => {
      const height = rowsPerGroup[variant] * limit + 1;
      expect(Math.ceil(height / rowsPerGroup[variant])).toBeGreaterThan(limit);
      const args = conv2dCase([1, height, 1, 1], 11);
      await bothWays('conv2d', args, conv2dOutputLength(validateConv2d(args)), variant);
    });
  }

  it('naive: one row of limit + 1 columns (one workgroup column per pixel column) matches the reference', async () => {
    const width = limit + 1;
    const args = conv2dCase([1, 1, width, 3], 12);
    await bothWays('conv2d', args, conv2dOutputLength(validateConv2d(args)), 'naive');
  });

  it('auto: a column so tall that every candidate needs more than the limit in y (K=1)', async () => {
    const tallest = Math.max(...CONV2D_CANDIDATES.map((c) => (c.config.kernel === 'coalesced' ? 8 : conv2dBlock(c.config)[1])));
    const height = tallest * limit + 1;
    for (const c of CONV2D_CANDIDATES) expect(Math.ceil(height / (c.config.kernel === 'coalesced' ? 8 : conv2dBlock(c.config)[1]))).toBeGreaterThan(limit);
    const args = conv2dCase([1, height, 1, 1], 13);
    await bothWays('conv2d', args, conv2dOutputLength(validateConv2d(args)), 'auto');
  });
});

describe('stencil3d past the per-dimension workgroup limit', () => {
  it('tiled: ny = 4·limit + 1 (y) and nz = 2·limit + 1 (z)', async () => {
    const ny = TILED.ty * limit + 1;
    const nz = TILED.tz * limit + 1;
    expect(Math.ceil(ny / TILED.ty)).toBeGreaterThan(limit);
    expect(Math.ceil(nz / TILED.tz)).toBeGreaterThan(limit);
    await bothWays('stencil3d', stencilCase([3, ny, 3, 1, 'zero'], 21), 3 * ny * 3, 'tiled');
    await bothWays('stencil3d', stencilCase([3, 3, nz, 1, 'copy'], 22), 3 * 3 * nz, 'tiled');
  });

  it('streamed: ny = 8·limit + 1, the issue\'s 3 × 524 281 × 3 on a 65 535 limit', async () => {
    const ny = STREAMED.ty * limit + 1;
    expect(Math.ceil(ny / STREAMED.ty)).toBeGreaterThan(limit);
    await bothWays('stencil3d', stencilCase([3, ny, 3, 2, 'zero'], 23), 3 * ny * 3, 'streamed');
  });

  it('tiled and streamed: nx = 32·limit + 1 (x)', async () => {
    const nx = Math.max(TILED.tx, STREAMED.tx) * limit + 1;
    expect(Math.ceil(nx / TILED.tx)).toBeGreaterThan(limit);
    expect(Math.ceil(nx / STREAMED.tx)).toBeGreaterThan(limit);
    for (const variant of ['tiled', 'streamed']) await bothWays('stencil3d', stencilCase([nx, 1, 1, 1, 'copy'], 24), nx, variant);
  });
});

describe('convLayer past the per-dimension workgroup limit', () => {
  it('tiled and auto: one column of 16·limit + 1 output rows (16×16 tiles: one workgroup per 16 rows)', async () => {
    const height = 16 * limit + 1;
    expect(Math.ceil(height / 16)).toBeGreaterThan(limit);
    const args = convLayerCase([1, 1, height, 1, 1, 1], 31);
    for (const variant of ['tiled', 'auto']) await bothWays('convLayer', args, layerLength(args), variant);
  });

  it('direct: limit + 1 maps (one workgroup row per map); gemm: 16·limit + 1 maps (16 maps per workgroup)', async () => {
    const direct = convLayerCase([1, 1, 1, 1, limit + 1, 1], 32);
    await bothWays('convLayer', direct, layerLength(direct), 'direct');
    const maps = 16 * limit + 1;
    expect(Math.ceil(maps / 16)).toBeGreaterThan(limit);
    const gemm = convLayerCase([1, 1, 1, 1, maps, 1], 33);
    await bothWays('convLayer', gemm, layerLength(gemm), 'gemm');
  });
});

describe('a failed call leaves out untouched', () => {
  const refused = async (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      () => 'resolved',
      (e: unknown) => e,
    );

  it('conv2d and stencil3d: a pass WebGPU refuses rejects with DeviceError and never reaches out', async () => {
    const args = conv2dCase([2, 40, 30, 3], 41);
    const out = new Float32Array(conv2dOutputLength(validateConv2d(args))).fill(-12345.5);
    failPass(b);
    const err = await refused(b.conv2d(args, { variant: 'tiled', out }));
    expect(err).toBeInstanceOf(DeviceError);
    expect(out.every((v) => v === -12345.5)).toBe(true);
    const st = stencilCase([8, 8, 8, 3, 'zero'], 42);
    const sout = new Float32Array(512).fill(-12345.5);
    failPass(b);
    expect(await refused(b.stencil3d(st, { variant: 'streamed', out: sout }))).toBeInstanceOf(DeviceError);
    expect(sout.every((v) => v === -12345.5)).toBe(true);
    expect(outstanding()).toBe(0);
    // The backend keeps working, into the same out.
    await b.conv2d(args, { variant: 'tiled', out });
    expect(verifyResult('conv2d', args, out)).toBeUndefined();
  });

  it('chunked calls: a refused second chunk leaves out as it was (scan in chunks, convLayer on the chunk pipeline, with and without a signal)', async () => {
    await using chunky = await createWebGpuBackend({ adapter: 'software', scanChunkElements: 2048, convLayerChunkItems: 1, convLayerOverlap: false });
    const sc = scanCase('u32', 10_000, 43);
    const sout = new Uint32Array(10_000).fill(0xdeadbeef);
    failPass(chunky, 2);
    expect(await refused(chunky.scan(sc, { variant: 'reduce-then-scan', out: sout }))).toBeInstanceOf(DeviceError);
    expect(sout.every((v) => v === 0xdeadbeef)).toBe(true);
    const layer = convLayerCase([3, 2, 9, 9, 4, 3], 44);
    const lout = new Float32Array(layerLength(layer)).fill(-12345.5);
    failPass(chunky, 2);
    expect(await refused(chunky.convLayer(layer, { variant: 'direct', out: lout }))).toBeInstanceOf(DeviceError);
    expect(lout.every((v) => v === -12345.5)).toBe(true);
    const guarded = new Float32Array(layerLength(layer)).fill(-12345.5);
    failPass(chunky, 2);
    expect(await refused(chunky.convLayer(layer, { variant: 'direct', out: guarded, signal: new AbortController().signal }))).toBeInstanceOf(DeviceError);
    expect(guarded.every((v) => v === -12345.5)).toBe(true);
    expect(webgpuStats(chunky).outBuffers).toBe(0);
  });
});
