/**
 * The shared bad-input table, free of vitest so that scripts outside a test runner (the GPU-host
 * reliability run) import it through `@kernelkit/ops/testing/data`; `bad-input.ts` registers it
 * as tests.
 */
import { AbortError, LimitExceededError, type KernelkitError } from '@kernelkit/core';
import type { OpName, RunOptions } from '../backend.js';
import { detachedArray } from './buffers.js';
import { conv2dCase, convLayerCase, scanCase, stencilCase } from './cases.js';

export type ErrorClass = abstract new (...a: never[]) => KernelkitError;

/** One row of the bad-input table: an op call that must be refused naming `parameter` (none for an AbortError). */
export interface BadInputCase {
  readonly op: OpName;
  readonly what: string;
  /** Fresh (args, options) for each run; `options.out`, when present, is checked for untouched-ness. */
  readonly make: () => { args: unknown; options?: RunOptions<unknown> };
  readonly parameter?: string;
  readonly error?: ErrorClass;
  /** Run the row once per variant of the op: the refusal comes from code that differs per variant (e.g. grid search's pruned and naive paths). */
  readonly everyVariant?: boolean;
  /**
   * A gap in the shared validation, outside the testing code: the row is registered with
   * `it.fails`, so it turns red once the gap is fixed and the marker must then be removed.
   */
  readonly knownGap?: string;
}

/**
 * A backend-supplied row: an input larger than this backend can hold (e.g. more cells than one
 * gpu.js kernel can index). Checked like a bad-input row.
 */
export interface OversizeCase {
  readonly op: OpName;
  readonly what: string;
  readonly make: () => { args: unknown; options?: RunOptions<unknown> };
  readonly error: ErrorClass;
  /** Checked when given and the error has a `parameter` (InvalidArgumentError, LimitExceededError). */
  readonly parameter?: string;
  readonly knownGap?: string;
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
const f32 = (n: number) => detachedArray(Float32Array, n);
const f64 = (n: number) => detachedArray(Float64Array, n);

/** Values every size field must refuse, with the field named. */
const BAD_SIZES: readonly (readonly [string, number])[] = [
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['negative', -1],
  ['non-integer', 1.5],
];

const SIZE_FIELDS: readonly { readonly op: OpName; readonly base: () => object; readonly fields: readonly string[] }[] = [
  { op: 'conv2d', base: conv, fields: ['batch', 'height', 'width', 'k'] },
  { op: 'stencil3d', base: sten, fields: ['nx', 'ny', 'nz', 'steps'] },
  { op: 'convLayer', base: layer, fields: ['batch', 'channels', 'height', 'width', 'maps', 'k'] },
  { op: 'gridSearch', base: grid, fields: ['maxPoints'] },
];

const SIZE_CASES: readonly BadInputCase[] = SIZE_FIELDS.flatMap(({ op, base, fields }) =>
  fields.flatMap((field) => BAD_SIZES.map(([label, value]): BadInputCase => ({ op, what: `${field} ${label}`, make: () => ({ args: { ...base(), [field]: value } }), parameter: field }))),
);

/** Grid-axis fields: finite numbers (any sign, fractions fine). */
const GRID_AXIS_CASES: readonly BadInputCase[] = (
  [
    ['lower', Number.NaN],
    ['lower', Number.NEGATIVE_INFINITY],
    ['upper', Number.POSITIVE_INFINITY],
    ['step', Number.NaN],
    ['step', Number.POSITIVE_INFINITY],
  ] as const
).map(([field, value]) => ({
  op: 'gridSearch',
  what: `dims[1].${field} ${String(value)}`,
  make: () => ({ args: { ...grid(), dims: [grid().dims[0], { ...grid().dims[1], [field]: value }] } }),
  parameter: `dims[1].${field}`,
}));

/** Every array argument of every op, and every op's `out`, backed by a transferred (detached) buffer. */
const DETACHED_CASES: readonly BadInputCase[] = [
  { op: 'conv2d', what: 'input detached', make: () => ({ args: { ...conv(), input: f32(60) } }), parameter: 'input' },
  { op: 'conv2d', what: 'filter detached', make: () => ({ args: { ...conv(), filter: f32(9) } }), parameter: 'filter' },
  { op: 'conv2d', what: 'options.out detached', make: () => ({ args: conv(), options: { out: f32(60) } }), parameter: 'options.out' },
  { op: 'stencil3d', what: 'input detached', make: () => ({ args: { ...sten(), input: f32(120) } }), parameter: 'input' },
  { op: 'stencil3d', what: 'f64 input detached', make: () => ({ args: { ...sten(), input: f64(120) } }), parameter: 'input' },
  { op: 'stencil3d', what: 'options.out detached', make: () => ({ args: sten(), options: { out: f32(120) } }), parameter: 'options.out' },
  { op: 'scan', what: 'f32 input detached', make: () => ({ args: { input: f32(10) } }), parameter: 'input' },
  { op: 'scan', what: 'u32 input detached', make: () => ({ args: { input: detachedArray(Uint32Array, 10) } }), parameter: 'input' },
  { op: 'scan', what: 'options.out detached', make: () => ({ args: scanCase('u32', 10, 1), options: { out: detachedArray(Uint32Array, 10) } }), parameter: 'options.out' },
  { op: 'gridSearch', what: 'coefficients detached', make: () => ({ args: { ...grid(), coefficients: f64(2) } }), parameter: 'coefficients' },
  { op: 'gridSearch', what: 'targets detached', make: () => ({ args: { ...grid(), targets: f64(1) } }), parameter: 'targets' },
  { op: 'gridSearch', what: 'tolerances detached', make: () => ({ args: { ...grid(), tolerances: f64(1) } }), parameter: 'tolerances' },
  { op: 'convLayer', what: 'input detached', make: () => ({ args: { ...layer(), input: f32(224) } }), parameter: 'input' },
  { op: 'convLayer', what: 'weights detached', make: () => ({ args: { ...layer(), weights: f32(54) } }), parameter: 'weights' },
  { op: 'convLayer', what: 'bias detached', make: () => ({ args: { ...layer(), bias: f32(3) } }), parameter: 'bias' },
  { op: 'convLayer', what: 'options.out detached', make: () => ({ args: layer(), options: { out: f32(180) } }), parameter: 'options.out' },
];

/** Each size valid on its own, the arrays of valid lengths, but not for each other. */
const MISMATCH_CASES: readonly BadInputCase[] = [
  { op: 'conv2d', what: 'batch×height×width ≠ input.length (batch 3 for 2 images)', make: () => ({ args: { ...conv(), batch: 3 } }), parameter: 'input' },
  { op: 'conv2d', what: 'batch×height×width ≠ input.length (width 6 for 5)', make: () => ({ args: { ...conv(), width: 6 } }), parameter: 'input' },
  { op: 'conv2d', what: 'filter is k×k for another k (k 5, 9 taps)', make: () => ({ args: { ...conv(), k: 5 } }), parameter: 'filter' },
  { op: 'stencil3d', what: 'nx×ny×nz ≠ input.length', make: () => ({ args: { ...sten(), ny: 6 } }), parameter: 'input' },
  { op: 'stencil3d', what: 'ny and nz default to nx: 6³ ≠ input.length', make: () => ({ args: { input: sten().input, nx: 6 } }), parameter: 'input' },
  { op: 'convLayer', what: 'weights for another map count (maps 4)', make: () => ({ args: { ...layer(), maps: 4 } }), parameter: 'weights' },
  { op: 'convLayer', what: 'input for another channel count (channels 3)', make: () => ({ args: { ...layer(), channels: 3 } }), parameter: 'input' },
  { op: 'gridSearch', what: 'coefficients for another dimension count', make: () => ({ args: { ...grid(), dims: [...grid().dims, { lower: 0, upper: 1, step: 0.5 }] } }), parameter: 'coefficients' },
];

/** Problems whose size cannot be represented or returned; refused without allocating them. */
const LIMIT_CASES: readonly BadInputCase[] = [
  { op: 'conv2d', what: 'batch×height×width above 2^32−1', make: () => ({ args: { ...conv(), batch: 1, height: 2 ** 16 + 1, width: 2 ** 16 } }), parameter: 'input' },
  { op: 'stencil3d', what: 'nx×ny×nz above 2^32−1', make: () => ({ args: { ...sten(), nx: 2 ** 11, ny: 2 ** 11, nz: 2 ** 11 } }), parameter: 'input' },
  { op: 'convLayer', what: 'batch×channels×height×width above 2^32−1', make: () => ({ args: { ...layer(), batch: 2 ** 16, channels: 2 ** 16 } }), parameter: 'input' },
  { op: 'gridSearch', what: 'more than 2^53 grid points', make: () => ({ args: { ...grid(), dims: [0, 1].map(() => ({ lower: 0, upper: 2 ** 30, step: 1 })) } }), parameter: 'dims' },
  { op: 'gridSearch', what: 'more than 2^31 points on one axis', make: () => ({ args: { ...grid(), dims: [{ lower: 0, upper: 2 ** 32, step: 1 }, grid().dims[1]] } }), parameter: 'dims[0]' },
  {
    op: 'gridSearch',
    what: 'more passing points than maxPoints',
    make: () => ({ args: { dims: [{ lower: 0, upper: 4, step: 1 }, { lower: 0, upper: 4, step: 1 }], coefficients: [], targets: [], tolerances: [], maxPoints: 5 } }),
    parameter: 'maxPoints',
    error: LimitExceededError,
    everyVariant: true,
  },
  {
    op: 'gridSearch',
    what: 'maxPoints 0 and a passing point',
    make: () => ({ args: { ...grid(), maxPoints: 0 } }),
    parameter: 'maxPoints',
    error: LimitExceededError,
    everyVariant: true,
  },
];


/**
 * A value that answers `first` on its first read and `later` on every read after: validation
 * must check and keep the first answer. Not enumerable, so the harness's snapshot of the
 * arguments does not take the first read.
 */
function changing<T extends object>(base: T, key: string, first: unknown, later: unknown): T {
  const args = { ...base } as Record<string, unknown>;
  delete args[key];
  let reads = 0;
  Object.defineProperty(args, key, { enumerable: false, get: () => (reads++ === 0 ? first : later) });
  return args as T;
}

/** A Proxy over `base` that hides `key` from key listings (and so from the harness's snapshot) and answers it `first`, then `later`. */
function changingProxy<T extends object>(base: T, key: string, first: unknown, later: unknown): T {
  let reads = 0;
  return new Proxy(base, {
    get: (t, k, r) => (k === key ? (reads++ === 0 ? first : later) : Reflect.get(t, k, r)),
    ownKeys: (t) => Reflect.ownKeys(t).filter((k) => k !== key),
  });
}

/** A DeviceArray made by the caller, not by a backend: `read()` is whatever the row says. */
const callerHandle = (dtype: string, length: number, read: () => Promise<unknown>) => ({ kind: 'device-array', backend: 'cpu', dtype, length, location: 'host', disposed: false, read, dispose: () => {} });

/** A signal that aborts `ms` after the row is made (while the call waits). */
function abortsSoon(ms: number): AbortSignal {
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error('row timeout')), ms).unref();
  return ac.signal;
}

/**
 * The argument object itself is hostile or unusual: fields that answer differently on a second
 * read, Proxies, sparse arrays, values of the wrong kind inside number arrays, unknown keys, an
 * own `length` on `out`, caller-made DeviceArrays that lie, and grids past what a backend holds.
 */
const HOSTILE_CASES: readonly BadInputCase[] = [
  { op: 'conv2d', what: 'height getter: 3 on the first read (wrong for the input), 6 after', make: () => ({ args: changing(conv(), 'height', 3, 6) }), parameter: 'input' },
  { op: 'convLayer', what: 'k getter: 9 on the first read (larger than the image), 3 after', make: () => ({ args: changing(layer(), 'k', 9, 3) }), parameter: 'k' },
  {
    op: 'gridSearch',
    what: 'dims[0].step getter: 1e-9 on the first read (2·10^9 points), 0.5 after',
    make: () => ({ args: { ...grid(), dims: [changing(grid().dims[0]!, 'step', 1e-9, 0.5), grid().dims[1]] } }),
    parameter: 'dims[0]',
    error: LimitExceededError,
  },
  { op: 'conv2d', what: 'Proxy args: k 4 on the first read, 3 after', make: () => ({ args: changingProxy(conv(), 'k', 4, 3) }), parameter: 'k' },
  { op: 'stencil3d', what: 'Proxy args: nx 7 on the first read, 6 after', make: () => ({ args: changingProxy(sten(), 'nx', 7, 6) }), parameter: 'input' },
  // eslint-disable-next-line no-sparse-arrays -- the hole is the bad input under test
  { op: 'gridSearch', what: 'dims sparse: [, dim]', make: () => ({ args: { ...grid(), dims: [, grid().dims[1]] } }), parameter: 'dims[0]' },
  { op: 'gridSearch', what: 'dims new Array(2)', make: () => ({ args: { ...grid(), dims: new Array(2) } }), parameter: 'dims[0]' },
  { op: 'gridSearch', what: "targets ['0x0'] (a string)", make: () => ({ args: { ...grid(), targets: ['0x0'] } }), parameter: 'targets[0]' },
  { op: 'gridSearch', what: 'coefficients [1n, 1] (a BigInt)', make: () => ({ args: { ...grid(), coefficients: [1n, 1] } }), parameter: 'coefficients[0]' },
  { op: 'convLayer', what: 'unknown key Relu (for relu)', make: () => ({ args: { ...layer(), Relu: true } }), parameter: 'Relu' },
  { op: 'conv2d', what: 'unknown key kernel', make: () => ({ args: { ...conv(), kernel: 3 } }), parameter: 'kernel' },
  { op: 'scan', what: 'unknown key inclusive', make: () => ({ args: { ...scanCase('u32', 10, 1), inclusive: true } }), parameter: 'inclusive' },
  { op: 'gridSearch', what: 'unknown key in dims[0]', make: () => ({ args: { ...grid(), dims: [{ ...grid().dims[0], count: 4 }, grid().dims[1]] } }), parameter: 'dims[0].count' },
  {
    op: 'conv2d',
    what: 'options.out of 59 with an own length property of 60',
    make: () => {
      const out = new Float32Array(59);
      Object.defineProperty(out, 'length', { value: 60 });
      return { args: conv(), options: { out } };
    },
    parameter: 'options.out',
  },
  { op: 'conv2d', what: 'a caller-made DeviceArray whose read() returns 10 of 60 elements', make: () => ({ args: { ...conv(), input: callerHandle('f32', 60, async () => new Float32Array(10)) } }), parameter: 'input' },
  { op: 'scan', what: 'a caller-made DeviceArray whose read() returns a plain Array', make: () => ({ args: { input: callerHandle('u32', 3, async () => [1, 2, 3]) } }), parameter: 'input' },
  { op: 'scan', what: 'a caller-made DeviceArray whose read() returns another element type', make: () => ({ args: { input: callerHandle('u32', 3, async () => new Int32Array(3)) } }), parameter: 'input' },
  {
    op: 'conv2d',
    what: 'a caller-made DeviceArray whose read() never settles, and a signal that aborts',
    make: () => ({ args: { ...conv(), input: callerHandle('f32', 60, () => new Promise<never>(() => {})) }, options: { signal: abortsSoon(50) } }),
    error: AbortError,
  },
  {
    op: 'gridSearch',
    what: 'one axis past the axis values a backend holds (2^26 + 1 points)',
    make: () => ({ args: { dims: [{ lower: 0, upper: 2 ** 26 + 1, step: 1 }], coefficients: [1], targets: [-1], tolerances: [0] } }),
    parameter: 'dims[0]',
    error: LimitExceededError,
  },
  {
    op: 'gridSearch',
    what: 'axes that together pass the axis values a backend holds (2^25 + 2^25 + 2 points)',
    make: () => ({ args: { dims: [{ lower: 0, upper: 2 ** 25 + 1, step: 1 }, { lower: 0, upper: 2 ** 25 + 1, step: 1 }], coefficients: [1, 1], targets: [-1], tolerances: [0] } }),
    parameter: 'dims[1]',
    error: LimitExceededError,
  },
  {
    op: 'gridSearch',
    what: 'a huge but valid axis (2^26 points) with an already-aborted signal',
    make: () => {
      const ac = new AbortController();
      ac.abort(new Error('stop'));
      return { args: { dims: [{ lower: 0, upper: 2 ** 26, step: 1 }], coefficients: [1], targets: [-1], tolerances: [0] }, options: { signal: ac.signal } };
    },
    error: AbortError,
  },
];

export const BAD_INPUT_CASES: readonly BadInputCase[] = [
  // conv2d
  { op: 'conv2d', what: 'args is null', make: () => ({ args: null }), parameter: 'args' },
  { op: 'conv2d', what: 'input too short', make: () => ({ args: { ...conv(), input: new Float32Array(59) } }), parameter: 'input' },
  { op: 'conv2d', what: 'input is Float64Array', make: () => ({ args: { ...conv(), input: new Float64Array(60) } }), parameter: 'input' },
  { op: 'conv2d', what: 'input is a plain array', make: () => ({ args: { ...conv(), input: Array(60).fill(0) } }), parameter: 'input' },
  { op: 'conv2d', what: 'filter wrong length', make: () => ({ args: { ...conv(), filter: new Float32Array(8) } }), parameter: 'filter' },
  { op: 'conv2d', what: 'height 0', make: () => ({ args: { ...conv(), height: 0 } }), parameter: 'height' },
  { op: 'conv2d', what: 'batch 0', make: () => ({ args: { ...conv(), batch: 0 } }), parameter: 'batch' },
  { op: 'conv2d', what: 'k even', make: () => ({ args: { ...conv(), k: 4, filter: new Float32Array(16) } }), parameter: 'k' },
  { op: 'conv2d', what: 'k 0', make: () => ({ args: { ...conv(), k: 0 } }), parameter: 'k' },
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
  { op: 'scan', what: 'initial 2^32 for u32', make: () => ({ args: { ...scanCase('u32', 10, 1), initial: 2 ** 32 } }), parameter: 'initial' },
  { op: 'scan', what: 'initial below −2^31 for i32', make: () => ({ args: { ...scanCase('i32', 10, 1), initial: -(2 ** 31) - 1 } }), parameter: 'initial' },
  { op: 'scan', what: 'initial non-integer for i32', make: () => ({ args: { ...scanCase('i32', 10, 1), initial: 1.5 } }), parameter: 'initial' },
  { op: 'scan', what: 'initial NaN for f32', make: () => ({ args: { ...scanCase('f32', 10, 1), initial: Number.NaN } }), parameter: 'initial' },
  { op: 'scan', what: 'initial Infinity for f32', make: () => ({ args: { ...scanCase('f32', 10, 1), initial: Number.POSITIVE_INFINITY } }), parameter: 'initial' },
  { op: 'scan', what: 'options.out wrong length', make: () => ({ args: scanCase('u32', 10, 1), options: { out: new Uint32Array(9) } }), parameter: 'options.out' },
  { op: 'scan', what: 'options.out wrong type', make: () => ({ args: scanCase('u32', 10, 1), options: { out: new Int32Array(10) } }), parameter: 'options.out' },
  // gridSearch
  { op: 'gridSearch', what: 'dims empty', make: () => ({ args: { ...grid(), dims: [], coefficients: [] } }), parameter: 'dims' },
  { op: 'gridSearch', what: 'dims not an array', make: () => ({ args: { ...grid(), dims: { lower: 0 } } }), parameter: 'dims' },
  { op: 'gridSearch', what: 'dims[0] not an object', make: () => ({ args: { ...grid(), dims: [3, grid().dims[1]] } }), parameter: 'dims[0]' },
  { op: 'gridSearch', what: 'step 0', make: () => ({ args: { ...grid(), dims: [{ lower: 0, upper: 1, step: 0 }, grid().dims[1]] } }), parameter: 'dims[0].step' },
  { op: 'gridSearch', what: 'step negative', make: () => ({ args: { ...grid(), dims: [grid().dims[0], { lower: 0, upper: 1, step: -0.5 }] } }), parameter: 'dims[1].step' },
  { op: 'gridSearch', what: 'lower > upper', make: () => ({ args: { ...grid(), dims: [{ lower: 3, upper: 1, step: 0.5 }, grid().dims[1]] } }), parameter: 'dims[0].lower' },
  { op: 'gridSearch', what: 'upper NaN', make: () => ({ args: { ...grid(), dims: [{ lower: 0, upper: Number.NaN, step: 0.5 }, grid().dims[1]] } }), parameter: 'dims[0].upper' },
  { op: 'gridSearch', what: 'coefficients wrong length', make: () => ({ args: { ...grid(), coefficients: [1, 1, 1] } }), parameter: 'coefficients' },
  { op: 'gridSearch', what: 'coefficient Infinity', make: () => ({ args: { ...grid(), coefficients: [1, Number.POSITIVE_INFINITY] } }), parameter: 'coefficients[1]' },
  { op: 'gridSearch', what: 'target NaN', make: () => ({ args: { ...grid(), targets: [Number.NaN] } }), parameter: 'targets[0]' },
  { op: 'gridSearch', what: 'targets not an array', make: () => ({ args: { ...grid(), targets: 2 } }), parameter: 'targets' },
  { op: 'gridSearch', what: 'tolerances wrong length', make: () => ({ args: { ...grid(), tolerances: [0.5, 0.5] } }), parameter: 'tolerances' },
  { op: 'gridSearch', what: 'tolerance negative', make: () => ({ args: { ...grid(), tolerances: [-0.5] } }), parameter: 'tolerances[0]' },
  { op: 'gridSearch', what: 'options.out given', make: () => ({ args: grid(), options: { out: new Float64Array(10) } }), parameter: 'options.out' },
  // convLayer
  { op: 'convLayer', what: 'k larger than the image', make: () => ({ args: { ...layer(), k: 9, weights: new Float32Array(3 * 2 * 81) } }), parameter: 'k' },
  { op: 'convLayer', what: 'k 0', make: () => ({ args: { ...layer(), k: 0 } }), parameter: 'k' },
  { op: 'convLayer', what: 'channels 0', make: () => ({ args: { ...layer(), channels: 0 } }), parameter: 'channels' },
  { op: 'convLayer', what: 'input wrong length (mismatched dims)', make: () => ({ args: { ...layer(), height: 9 } }), parameter: 'input' },
  { op: 'convLayer', what: 'weights wrong length', make: () => ({ args: { ...layer(), weights: new Float32Array(53) } }), parameter: 'weights' },
  { op: 'convLayer', what: 'bias wrong length', make: () => ({ args: { ...layer(), bias: new Float32Array(2) } }), parameter: 'bias' },
  { op: 'convLayer', what: 'relu not boolean', make: () => ({ args: { ...layer(), relu: 1 } }), parameter: 'relu' },
  { op: 'convLayer', what: 'options.out wrong length', make: () => ({ args: layer(), options: { out: new Float32Array(10) } }), parameter: 'options.out' },
  ...SIZE_CASES,
  ...GRID_AXIS_CASES,
  ...DETACHED_CASES,
  ...MISMATCH_CASES,
  ...LIMIT_CASES,
  ...HOSTILE_CASES,
];
