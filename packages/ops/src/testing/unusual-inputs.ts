import { runInNewContext } from 'node:vm';
import { expect, it } from 'vitest';
import type { Backend, OpArgs, OpName, RunOptions } from '../backend.js';
import { scanStream } from '../scan/stream.js';
import { verifyResult } from '../verify.js';
import { conv2dCase, GRID_CASES, scanCase, stencilCase } from './cases.js';

/**
 * A valid call in an unusual form: `args` as the backend gets it, `plain` the same problem as
 * ordinary arguments for the reference, and `reads` (when given) how often each field was read.
 */
interface UnusualCall {
  readonly args: unknown;
  readonly plain: object;
  readonly options?: RunOptions<unknown>;
  readonly reads?: () => Readonly<Record<string, number>>;
}

interface UnusualCase {
  readonly op: OpName;
  readonly what: string;
  readonly make: () => UnusualCall;
  /** Extra check of the result beyond the reference comparison. */
  readonly check?: (data: unknown, call: UnusualCall) => string | undefined;
}

/** `base` behind getters that count their reads; each answers `later[key]` after its first read, when given. */
function counted<T extends object>(base: T, later: Partial<Record<keyof T, unknown>> = {}): { args: T; reads: () => Record<string, number> } {
  const counts: Record<string, number> = {};
  const args = {} as T;
  for (const [key, value] of Object.entries(base)) {
    counts[key] = 0;
    Object.defineProperty(args, key, {
      enumerable: true,
      get: () => (counts[key]!++ === 0 || !(key in later) ? value : later[key as keyof T]),
    });
  }
  return { args, reads: () => ({ ...counts }) };
}

/** `base` behind a Proxy that counts the reads of each key. */
function countingProxy<T extends object>(base: T): { args: T; reads: () => Record<string, number> } {
  const counts: Record<string, number> = {};
  const args = new Proxy(base, {
    get: (t, k, r) => {
      if (typeof k === 'string') counts[k] = (counts[k] ?? 0) + 1;
      return Reflect.get(t, k, r) as unknown;
    },
  });
  return { args, reads: () => ({ ...counts }) };
}

const foreign = <T>(code: string): T => runInNewContext(code) as T;
class TaggedFloat32 extends Float32Array {}
class TaggedUint32 extends Uint32Array {}

const UNUSUAL_CASES: readonly UnusualCase[] = [
  {
    op: 'conv2d',
    what: 'getters answering height 2000 after the first read: the first answer is used, each field read once',
    make: () => {
      const plain = conv2dCase([1, 6, 5, 3], 3);
      const { args, reads } = counted(plain, { height: 2000 });
      return { args, plain, reads };
    },
  },
  {
    op: 'stencil3d',
    what: 'a Proxy argument object: each field read once',
    make: () => {
      const plain = stencilCase([5, 4, 3, 2, 'copy'], 4);
      const { args, reads } = countingProxy(plain);
      return { args, plain, reads };
    },
  },
  {
    op: 'gridSearch',
    what: 'dims[0].step answering 1e-7 after the first read: the first answer is used',
    make: () => {
      const plain = GRID_CASES[0]!.args;
      const { args: dim0 } = counted(plain.dims[0]!, { step: 1e-7 });
      return { args: { ...plain, dims: [dim0, ...plain.dims.slice(1)] }, plain };
    },
  },
  {
    op: 'stencil3d',
    what: 'input a Float32Array from another realm (vm context)',
    make: () => {
      const plain = stencilCase([4, 4, 4, 1, 'zero'], 5);
      const input = foreign<Float32Array>(`new Float32Array(${JSON.stringify(Array.from(plain.input))})`);
      return { args: { ...plain, input }, plain };
    },
  },
  {
    op: 'conv2d',
    what: 'input and filter subclassed Float32Arrays, a plain out',
    make: () => {
      const plain = conv2dCase([2, 5, 4, 3], 6);
      const out = new Float32Array(40);
      return { args: { ...plain, input: TaggedFloat32.from(plain.input), filter: TaggedFloat32.from(plain.filter) }, plain, options: { out } };
    },
    check: (data, call) => (data === call.options?.out ? undefined : 'data is not the caller’s out'),
  },
  {
    op: 'scan',
    what: 'a subclassed Uint32Array input and a subclassed out',
    make: () => {
      const plain = scanCase('u32', 300, 7);
      const out = new TaggedUint32(300);
      return { args: { input: TaggedUint32.from(plain.input as Uint32Array) }, plain, options: { out } };
    },
    check: (data, call) => (data === call.options?.out ? undefined : 'data is not the caller’s out'),
  },
  {
    op: 'conv2d',
    what: 'a caller-made DeviceArray whose read() returns the right array',
    make: () => {
      const plain = conv2dCase([1, 4, 4, 3], 8);
      const input = { kind: 'device-array', backend: 'cpu', dtype: 'f32', length: 16, location: 'host', disposed: false, read: async () => plain.input.slice(), dispose: () => {} };
      return { args: { ...plain, input }, plain };
    },
  },
  {
    op: 'scan',
    what: 'f32 exclusive scan with initial -0: the first element is +0 (on every backend)',
    make: () => {
      const plain = scanCase('f32', 5, 9, true, 0);
      return { args: { ...plain, initial: -0 }, plain };
    },
    check: (data) => (Object.is((data as Float32Array)[0], 0) ? undefined : `out[0] is ${Object.is((data as Float32Array)[0], -0) ? '-0' : String((data as Float32Array)[0])}`),
  },
];

/**
 * Valid calls in unusual forms (getters, Proxies, other realms, subclasses, caller-made
 * handles, -0), each checked against the reference of the same call in plain form; and
 * scanStream over chunks whose running sum stops being finite.
 */
export function describeUnusualInputs(backend: Backend): void {
  for (const c of UNUSUAL_CASES) {
    it(`${c.op}: ${c.what}`, async () => {
      const call = c.make();
      const res = await (backend[c.op] as (a: unknown, o?: unknown) => Promise<{ data: unknown }>)(call.args, call.options);
      const msg = verifyResult(c.op, call.plain as OpArgs<typeof c.op>, res.data as never);
      if (msg !== undefined) expect.fail(msg);
      if (call.reads !== undefined) {
        for (const [key, n] of Object.entries(call.reads())) expect(n, `reads of ${key}`).toBeLessThanOrEqual(1);
      }
      expect(c.check?.(res.data, call)).toBeUndefined();
    });
  }

  it('scanStream: a running sum that becomes NaN or ±Infinity propagates like scan, with no error about initial', async () => {
    for (const exclusive of [false, true]) {
      const chunks = [new Float32Array([1, Number.NaN]), new Float32Array([2, 3]), new Float32Array([4])];
      const got: number[] = [];
      for await (const part of scanStream(backend, chunks, { exclusive })) got.push(...part);
      expect(got.slice(2).every(Number.isNaN), `exclusive ${exclusive}: ${got.join(', ')}`).toBe(true);
      const big = [new Float32Array([3e38, 3e38]), new Float32Array([1, -2]), new Float32Array([5])];
      const sums: number[] = [];
      for await (const part of scanStream(backend, big, { exclusive })) sums.push(...part);
      expect(sums).toHaveLength(5);
      expect(sums.slice(exclusive ? 2 : 1).every((v) => v === Number.POSITIVE_INFINITY), `exclusive ${exclusive}: ${sums.join(', ')}`).toBe(true);
    }
  });
}
