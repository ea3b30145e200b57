import { expect, it } from 'vitest';
import { InvalidArgumentError, KernelkitError } from '@kernelkit/core';
import type { Backend, OpName, RunOptions } from '../backend.js';
import { conv2dCase, convLayerCase, scanCase, stencilCase } from './cases.js';
import { verifyResult } from '../verify.js';

/** One row of the bad-input table: an op call that must be refused naming `parameter`. */
export interface BadInputCase {
  readonly op: OpName;
  readonly what: string;
  /** Fresh (args, options) for each run; `options.out`, when present, is checked for untouched-ness. */
  readonly make: () => { args: unknown; options?: RunOptions<unknown> };
  readonly parameter: string;
  readonly error?: abstract new (...a: never[]) => KernelkitError;
}

const conv = () => conv2dCase([2, 6, 5, 3], 1);
const sten = () => stencilCase([6, 5, 4, 2, 'zero'], 1);
const layer = () => convLayerCase([2, 2, 8, 7, 3, 3], 1);
const grid = () => ({
  dims: [
    { lower: 0, upper: 2, step: 0.5 },
    { lower: 1, upper: 3, step: 0.5 },
  ],
  coefficients: [1, 1],
  targets: [2],
  tolerances: [0.5],
});
const detached = (): Float32Array => {
  const a = new Float32Array(60);
  structuredClone(a.buffer, { transfer: [a.buffer] });
  return a;
};

export const BAD_INPUT_CASES: readonly BadInputCase[] = [
  // conv2d
  { op: 'conv2d', what: 'args is null', make: () => ({ args: null }), parameter: 'args' },
  { op: 'conv2d', what: 'input too short', make: () => ({ args: { ...conv(), input: new Float32Array(59) } }), parameter: 'input' },
  { op: 'conv2d', what: 'input is Float64Array', make: () => ({ args: { ...conv(), input: new Float64Array(60) } }), parameter: 'input' },
  { op: 'conv2d', what: 'input is a plain array', make: () => ({ args: { ...conv(), input: Array(60).fill(0) } }), parameter: 'input' },
  { op: 'conv2d', what: 'input detached', make: () => ({ args: { ...conv(), input: detached() } }), parameter: 'input' },
  { op: 'conv2d', what: 'filter wrong length', make: () => ({ args: { ...conv(), filter: new Float32Array(8) } }), parameter: 'filter' },
  { op: 'conv2d', what: 'height 0', make: () => ({ args: { ...conv(), height: 0 } }), parameter: 'height' },
  { op: 'conv2d', what: 'width negative', make: () => ({ args: { ...conv(), width: -5 } }), parameter: 'width' },
  { op: 'conv2d', what: 'height non-integer', make: () => ({ args: { ...conv(), height: 2.5 } }), parameter: 'height' },
  { op: 'conv2d', what: 'width NaN', make: () => ({ args: { ...conv(), width: Number.NaN } }), parameter: 'width' },
  { op: 'conv2d', what: 'height Infinity', make: () => ({ args: { ...conv(), height: Number.POSITIVE_INFINITY } }), parameter: 'height' },
  { op: 'conv2d', what: 'batch 0', make: () => ({ args: { ...conv(), batch: 0 } }), parameter: 'batch' },
  { op: 'conv2d', what: 'k even', make: () => ({ args: { ...conv(), k: 4, filter: new Float32Array(16) } }), parameter: 'k' },
  { op: 'conv2d', what: 'k 0', make: () => ({ args: { ...conv(), k: 0 } }), parameter: 'k' },
  { op: 'conv2d', what: 'k negative', make: () => ({ args: { ...conv(), k: -3 } }), parameter: 'k' },
  { op: 'conv2d', what: 'k a string', make: () => ({ args: { ...conv(), k: '3' } }), parameter: 'k' },
  { op: 'conv2d', what: 'unknown variant', make: () => ({ args: conv(), options: { variant: 'warp-speed' } }), parameter: 'options.variant' },
  { op: 'conv2d', what: 'options not an object', make: () => ({ args: conv(), options: 'fast' as never }), parameter: 'options' },
  { op: 'conv2d', what: 'options.out wrong length', make: () => ({ args: conv(), options: { out: new Float32Array(59) } }), parameter: 'options.out' },
  { op: 'conv2d', what: 'options.out wrong type', make: () => ({ args: conv(), options: { out: new Float64Array(60) } }), parameter: 'options.out' },
  {
    op: 'conv2d',
    what: 'options.out aliases the input',
    make: () => {
      const a = conv();
      return { args: a, options: { out: a.input } };
    },
    parameter: 'options.out',
  },
  { op: 'conv2d', what: 'options.timing not boolean', make: () => ({ args: conv(), options: { timing: 'yes' as never } }), parameter: 'options.timing' },
  { op: 'conv2d', what: 'options.signal not a signal', make: () => ({ args: conv(), options: { signal: {} as never } }), parameter: 'options.signal' },
  // stencil3d
  { op: 'stencil3d', what: 'nx 0', make: () => ({ args: { ...sten(), nx: 0 } }), parameter: 'nx' },
  { op: 'stencil3d', what: 'ny non-integer', make: () => ({ args: { ...sten(), ny: 1.5 } }), parameter: 'ny' },
  { op: 'stencil3d', what: 'nz NaN', make: () => ({ args: { ...sten(), nz: Number.NaN } }), parameter: 'nz' },
  { op: 'stencil3d', what: 'steps negative', make: () => ({ args: { ...sten(), steps: -1 } }), parameter: 'steps' },
  { op: 'stencil3d', what: 'unknown boundary', make: () => ({ args: { ...sten(), boundary: 'wrap' } }), parameter: 'boundary' },
  { op: 'stencil3d', what: 'c0 NaN', make: () => ({ args: { ...sten(), c0: Number.NaN } }), parameter: 'c0' },
  { op: 'stencil3d', what: 'c1 Infinity', make: () => ({ args: { ...sten(), c1: Number.POSITIVE_INFINITY } }), parameter: 'c1' },
  { op: 'stencil3d', what: 'input wrong length', make: () => ({ args: { ...sten(), input: new Float32Array(119) } }), parameter: 'input' },
  { op: 'stencil3d', what: 'input Int32Array', make: () => ({ args: { ...sten(), input: new Int32Array(120) } }), parameter: 'input' },
  { op: 'stencil3d', what: 'options.out wrong dtype', make: () => ({ args: sten(), options: { out: new Float64Array(120) } }), parameter: 'options.out' },
  // scan
  { op: 'scan', what: 'input a plain array', make: () => ({ args: { input: [1, 2, 3] } }), parameter: 'input' },
  { op: 'scan', what: 'input Uint8Array', make: () => ({ args: { input: new Uint8Array(4) } }), parameter: 'input' },
  { op: 'scan', what: 'exclusive not boolean', make: () => ({ args: { ...scanCase('u32', 10, 1), exclusive: 'yes' } }), parameter: 'exclusive' },
  { op: 'scan', what: 'initial negative for u32', make: () => ({ args: { ...scanCase('u32', 10, 1), initial: -1 } }), parameter: 'initial' },
  { op: 'scan', what: 'initial non-integer for i32', make: () => ({ args: { ...scanCase('i32', 10, 1), initial: 1.5 } }), parameter: 'initial' },
  { op: 'scan', what: 'initial NaN for f32', make: () => ({ args: { ...scanCase('f32', 10, 1), initial: Number.NaN } }), parameter: 'initial' },
  { op: 'scan', what: 'options.out wrong length', make: () => ({ args: scanCase('u32', 10, 1), options: { out: new Uint32Array(9) } }), parameter: 'options.out' },
  { op: 'scan', what: 'options.out wrong type', make: () => ({ args: scanCase('u32', 10, 1), options: { out: new Int32Array(10) } }), parameter: 'options.out' },
  // gridSearch
  { op: 'gridSearch', what: 'dims empty', make: () => ({ args: { ...grid(), dims: [], coefficients: [] } }), parameter: 'dims' },
  { op: 'gridSearch', what: 'dims not an array', make: () => ({ args: { ...grid(), dims: { lower: 0 } } }), parameter: 'dims' },
  { op: 'gridSearch', what: 'step 0', make: () => ({ args: { ...grid(), dims: [{ lower: 0, upper: 1, step: 0 }, grid().dims[1]] } }), parameter: 'dims[0].step' },
  { op: 'gridSearch', what: 'step negative', make: () => ({ args: { ...grid(), dims: [grid().dims[0], { lower: 0, upper: 1, step: -0.5 }] } }), parameter: 'dims[1].step' },
  { op: 'gridSearch', what: 'lower > upper', make: () => ({ args: { ...grid(), dims: [{ lower: 3, upper: 1, step: 0.5 }, grid().dims[1]] } }), parameter: 'dims[0].lower' },
  { op: 'gridSearch', what: 'upper NaN', make: () => ({ args: { ...grid(), dims: [{ lower: 0, upper: Number.NaN, step: 0.5 }, grid().dims[1]] } }), parameter: 'dims[0].upper' },
  { op: 'gridSearch', what: 'coefficients wrong length', make: () => ({ args: { ...grid(), coefficients: [1, 1, 1] } }), parameter: 'coefficients' },
  { op: 'gridSearch', what: 'coefficient Infinity', make: () => ({ args: { ...grid(), coefficients: [1, Number.POSITIVE_INFINITY] } }), parameter: 'coefficients[1]' },
  { op: 'gridSearch', what: 'targets not an array', make: () => ({ args: { ...grid(), targets: 2 } }), parameter: 'targets' },
  { op: 'gridSearch', what: 'tolerances wrong length', make: () => ({ args: { ...grid(), tolerances: [0.5, 0.5] } }), parameter: 'tolerances' },
  { op: 'gridSearch', what: 'tolerance negative', make: () => ({ args: { ...grid(), tolerances: [-0.5] } }), parameter: 'tolerances[0]' },
  { op: 'gridSearch', what: 'maxPoints negative', make: () => ({ args: { ...grid(), maxPoints: -1 } }), parameter: 'maxPoints' },
  { op: 'gridSearch', what: 'options.out given', make: () => ({ args: grid(), options: { out: new Float64Array(10) } }), parameter: 'options.out' },
  // convLayer
  { op: 'convLayer', what: 'k larger than the image', make: () => ({ args: { ...layer(), k: 9, weights: new Float32Array(3 * 2 * 81) } }), parameter: 'k' },
  { op: 'convLayer', what: 'k 0', make: () => ({ args: { ...layer(), k: 0 } }), parameter: 'k' },
  { op: 'convLayer', what: 'channels 0', make: () => ({ args: { ...layer(), channels: 0 } }), parameter: 'channels' },
  { op: 'convLayer', what: 'maps non-integer', make: () => ({ args: { ...layer(), maps: 2.5 } }), parameter: 'maps' },
  { op: 'convLayer', what: 'batch negative', make: () => ({ args: { ...layer(), batch: -2 } }), parameter: 'batch' },
  { op: 'convLayer', what: 'input wrong length (mismatched dims)', make: () => ({ args: { ...layer(), height: 9 } }), parameter: 'input' },
  { op: 'convLayer', what: 'weights wrong length', make: () => ({ args: { ...layer(), weights: new Float32Array(53) } }), parameter: 'weights' },
  { op: 'convLayer', what: 'bias wrong length', make: () => ({ args: { ...layer(), bias: new Float32Array(2) } }), parameter: 'bias' },
  { op: 'convLayer', what: 'relu not boolean', make: () => ({ args: { ...layer(), relu: 1 } }), parameter: 'relu' },
  { op: 'convLayer', what: 'options.out wrong length', make: () => ({ args: layer(), options: { out: new Float32Array(10) } }), parameter: 'options.out' },
];

function snapshot(v: unknown): unknown {
  if (ArrayBuffer.isView(v)) return v.buffer.byteLength === 0 ? `${v.constructor.name}(detached or empty)` : Array.from(v as unknown as ArrayLike<number>);
  if (Array.isArray(v)) return v.map(snapshot);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, snapshot(x)]));
  return v;
}

/** Registers one test per bad-input row on `backend`. */
export function describeBadInput(backend: Backend): void {
  for (const c of BAD_INPUT_CASES) {
    it(`${c.op}: ${c.what} → ${c.error?.name ?? 'InvalidArgumentError'} naming ${c.parameter}`, async () => {
      const { args, options } = c.make();
      const out = options?.out as Float32Array | undefined;
      if (out !== undefined && out.buffer !== (args as { input?: ArrayBufferView }).input?.buffer) out.fill(42);
      const before = snapshot(args);
      const outBefore = out?.slice();
      const call = (backend[c.op] as (a: unknown, o?: unknown) => Promise<unknown>)(args, options);
      const err = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, 'the call must reject').toBeInstanceOf(c.error ?? InvalidArgumentError);
      if (err instanceof InvalidArgumentError) expect(err.parameter).toBe(c.parameter);
      expect((err as Error).message).toContain(c.parameter);
      expect(snapshot(args)).toEqual(before);
      if (out !== undefined && outBefore !== undefined) expect(Array.from(out)).toEqual(Array.from(outBefore));
      // The backend is still usable.
      const ok = conv2dCase([1, 5, 5, 3], 2);
      const res = await backend.conv2d(ok);
      expect(verifyResult('conv2d', ok, res.data)).toBeUndefined();
    });
  }
}
