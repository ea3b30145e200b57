import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { AbortError, DisposedError, UnsupportedError } from '@kernelkit/core';
import type { Backend, OpArgs, OpData, OpName } from '../backend.js';
import { OP_NAMES } from '../backend.js';

import { gridSearchReference } from '../grid-search/reference.js';
import { validateGridSearch } from '../grid-search/validate.js';
import { cs610Problem } from '../grid-search/cs610.js';
import { reduceGrid } from '../grid-search/workloads.js';
import type { ScanDtype } from '../scan/types.js';
import { verifyResult } from '../verify.js';
import { describeBadInput, type OversizeCase } from './bad-input.js';
import { describeConcurrency } from './concurrency.js';
import { describeHostileProperties } from './hostile-properties.js';
import { assertProperty, propertySettings, type PropertySettings } from './property.js';
import { describeSharedMemory } from './shared-memory.js';
import {
  CONV2D_CASES,
  CONV_LAYER_CASES,
  conv2dCase,
  convLayerCase,
  GRID_CASES,
  randomGridCase,
  SCAN_LENGTHS,
  scanCase,
  STENCIL_CASES,
  stencilCase,
  type CaseScale,
} from './cases.js';
import { readFileSync } from 'node:fs';
import { CS610_DISP_PATH, CS610_GRID_PATH } from '../grid-search/workloads.js';

export interface ConformanceOptions {
  /** Ops this backend does not run, each with the reason (printed as the skipped test's name). */
  readonly skipOps?: Partial<Record<OpName, string>>;
  /** `'op/variant'` → reason. */
  readonly skipVariants?: Readonly<Record<string, string>>;
  /** `'reduced'` drops the largest cases (software GPU adapters). Default `'full'`. */
  readonly scale?: CaseScale;
  /** fast-check runs per op and variant; default 200 (the CI floor). KERNELKIT_FC_RUNS, when set, overrides it. */
  readonly propertyRuns?: number;
  /** Per-test timeout in ms; default 120 000. */
  readonly timeoutMs?: number;
  /** Largest scan length to run (e.g. a gpu.js bound); default unlimited. */
  readonly maxScanLength?: number;
  /** Scan dtypes to run; default all the backend supports. */
  readonly scanDtypes?: readonly ScanDtype[];
  /** Inputs larger than this backend can hold, each refused with a named error (see `OversizeCase`). */
  readonly oversize?: readonly OversizeCase[];
  /** Calls per concurrency batch; default 64. */
  readonly concurrentCalls?: number;
}

/** Runs `op` with `variant` and checks the result against the f64 reference. */
async function expectConforms<O extends OpName>(backend: Backend, op: O, args: OpArgs<O>, variant: string): Promise<void> {
  const res = await (backend[op] as unknown as (a: OpArgs<O>, o: { variant: string }) => Promise<{ data: OpData<O>; variant: string; backend: string }>)(args, { variant });
  expect(res.variant).toBe(variant);
  expect(res.backend).toBe(backend.name);
  const msg = verifyResult(op, args, res.data);
  if (msg !== undefined) expect.fail(`${op}/${variant}: ${msg}`);
}

/**
 * The conformance suite every backend package runs: every op × variant against the f64
 * reference, property tests, the bad-input table (plus the backend's `oversize` rows),
 * SharedArrayBuffer inputs, concurrent and aborted calls on one instance, abort, `out`, timing
 * and lifetime rules.
 * The suite owns the backend from `create` and disposes it at the end.
 */
export async function describeConformance(name: string, create: () => Backend | Promise<Backend>, options: ConformanceOptions = {}): Promise<void> {
  // Before `create`: a malformed KERNELKIT_FC_* fails the file without leaving a backend behind.
  const props = propertySettings(options.propertyRuns);
  const backend = await create();
  const scale = options.scale ?? 'full';
  const timeout = options.timeoutMs ?? 120_000;
  const f64 = backend.info.capabilities.f64;
  afterAll(() => backend.dispose());

  describe(`${name}: conformance`, { timeout }, () => {
    for (const op of OP_NAMES) {
      const skipOp = options.skipOps?.[op];
      if (skipOp !== undefined) {
        it.skip(`${op} (skipped: ${skipOp})`, () => {});
        continue;
      }
      describe(op, () => {
        for (const variant of backend.variants(op)) {
          const skipV = options.skipVariants?.[`${op}/${variant}`];
          if (skipV !== undefined) {
            it.skip(`${variant} (skipped: ${skipV})`, () => {});
            continue;
          }
          describe(variant, () => defineOpCases(backend, op, variant, { scale, props, f64, options }));
        }
      });
    }

    describe('bad input', () => describeBadInput(backend, options.oversize === undefined ? {} : { oversize: options.oversize }));

    const variantsToRun = (op: OpName): readonly string[] =>
      options.skipOps?.[op] !== undefined ? [] : backend.variants(op).filter((v) => options.skipVariants?.[`${op}/${v}`] === undefined);
    const scanDtypes = (options.scanDtypes ?? (['u32', 'i32', 'f32', 'f64'] as const)).filter((d) => d !== 'f64' || f64);
    describe('hostile arguments', () =>
      describeHostileProperties(
        backend,
        OP_NAMES.filter((op) => options.skipOps?.[op] === undefined),
        props,
      ));
    describe('shared memory', () => describeSharedMemory(backend, { variants: variantsToRun, scanDtypes }));
    describe('concurrency', () =>
      describeConcurrency(backend, { variants: variantsToRun, scanDtypes, ...(options.concurrentCalls === undefined ? {} : { calls: options.concurrentCalls }) }));

    describe('options', () => {
      it('writes into options.out and returns it', async () => {
        const args = conv2dCase([1, 9, 11, 3], 5);
        const out = new Float32Array(99);
        const res = await backend.conv2d(args, { out });
        expect(res.data).toBe(out);
        expect(verifyResult('conv2d', args, out)).toBeUndefined();
      });
      it('writes every element of out, whatever it held before (a result array may reuse a dropped result)', async () => {
        const cases: readonly (readonly [OpName, OpArgs<OpName>, number])[] = [
          ['conv2d', conv2dCase([2, 9, 11, 3], 41), 2 * 9 * 11],
          ['stencil3d', stencilCase([6, 5, 7, 3, 'zero'], 42), 6 * 5 * 7],
          ['stencil3d', stencilCase([6, 5, 7, 2, 'copy'], 43), 6 * 5 * 7],
          ['scan', scanCase('u32', 1000, 44), 1000],
          ['scan', scanCase('f32', 1000, 45, true), 1000],
          ['convLayer', convLayerCase([2, 3, 9, 8, 5, 3], 46, { bias: true, relu: true }), 2 * 5 * 7 * 6],
        ];
        for (const [op, args, length] of cases) {
          for (const variant of variantsToRun(op)) {
            const input = (args as { readonly input: ArrayLike<number> & { readonly constructor: unknown } }).input;
            const Ctor = input.constructor as new (n: number) => Float32Array | Uint32Array;
            const out = new Ctor(length).fill(Ctor === Uint32Array ? 0xdeadbeef : Number.NaN);
            const run = backend[op] as unknown as (a: OpArgs<OpName>, o: object) => Promise<{ data: unknown }>;
            await run(args, { variant, out });
            const msg = verifyResult(op, args, out as never);
            if (msg !== undefined) expect.fail(`${op}/${variant} into a prefilled out: ${msg}`);
          }
        }
      });
      it('scans in place when options.out is the input', async () => {
        const args = scanCase('u32', 1000, 9);
        const copy = args.input.slice();
        const res = await backend.scan(args, { out: args.input });
        expect(res.data).toBe(args.input);
        expect(verifyResult('scan', { input: copy }, args.input)).toBeUndefined();
      });
      it('reports timing only when asked', async () => {
        const args = conv2dCase([1, 16, 16, 3], 1);
        const plain = await backend.conv2d(args);
        expect(plain.timing).toBeUndefined();
        const timed = await backend.conv2d(args, { timing: true });
        expect(timed.timing?.totalMs).toBeGreaterThanOrEqual(0);
      });
      it('rejects an aborted signal with AbortError before touching out', async () => {
        const ac = new AbortController();
        ac.abort(new Error('stop'));
        const out = new Float32Array(256).fill(7);
        await expect(backend.conv2d(conv2dCase([1, 16, 16, 3], 1), { signal: ac.signal, out })).rejects.toBeInstanceOf(AbortError);
        expect(out.every((v) => v === 7)).toBe(true);
        await expectConforms(backend, 'conv2d', conv2dCase([1, 16, 16, 3], 1), backend.variants('conv2d')[0]!);
      });
      it('an abort landing while the call runs rejects with AbortError and leaves out untouched', async () => {
        for (const op of ['conv2d', 'scan'] as const) {
          const ac = new AbortController();
          const args = op === 'conv2d' ? conv2dCase([2, 24, 24, 5], 3) : scanCase('u32', 5000, 3);
          const out = op === 'conv2d' ? new Float32Array(2 * 24 * 24).fill(7) : new Uint32Array(5000).fill(7);
          // Issued first, aborted second: on a synchronous backend the work is already done.
          const call = (backend[op] as (a: unknown, o: unknown) => Promise<unknown>)(args, { signal: ac.signal, out });
          ac.abort(new Error('late stop'));
          await expect(call).rejects.toBeInstanceOf(AbortError);
          expect(out.every((v) => v === 7), `${op}: out was written by an aborted call`).toBe(true);
        }
        // With a signal that never fires, out is still the result (filled after the last check).
        const out = new Float32Array(2 * 24 * 24);
        const res = await backend.conv2d(conv2dCase([2, 24, 24, 5], 3), { signal: new AbortController().signal, out });
        expect(res.data).toBe(out);
        expect(verifyResult('conv2d', conv2dCase([2, 24, 24, 5], 3), out)).toBeUndefined();
      });
      it('propagates NaN and Inf like IEEE arithmetic', async () => {
        const args = conv2dCase([1, 12, 12, 3], 3);
        args.input[5] = Number.NaN;
        args.input[77] = Number.POSITIVE_INFINITY;
        for (const v of backend.variants('conv2d')) await expectConforms(backend, 'conv2d', args, v);
        const s = stencilCase([8, 8, 8, 2, 'copy'], 3);
        s.input[200] = Number.NaN;
        for (const v of backend.variants('stencil3d')) await expectConforms(backend, 'stencil3d', s, v);
        const sc = scanCase('f32', 300, 4);
        sc.input[100] = Number.POSITIVE_INFINITY;
        for (const v of backend.variants('scan')) await expectConforms(backend, 'scan', sc, v);
      });
      it(f64 ? 'accepts f64 stencil and scan inputs' : 'refuses f64 inputs with UnsupportedError', async () => {
        const s = stencilCase([9, 9, 9, 2, 'zero'], 2, 'f64');
        const sc = scanCase('f64', 1000, 2);
        if (f64) {
          await expectConforms(backend, 'stencil3d', s, backend.variants('stencil3d')[0]!);
          await expectConforms(backend, 'scan', sc, backend.variants('scan')[0]!);
        } else {
          await expect(backend.stencil3d(s)).rejects.toBeInstanceOf(UnsupportedError);
          await expect(backend.scan(sc)).rejects.toBeInstanceOf(UnsupportedError);
        }
      });
      it('lists variants with the default first and rejects unknown ops', () => {
        for (const op of OP_NAMES) expect(backend.variants(op).length).toBeGreaterThan(0);
        expect(() => backend.variants('fft' as OpName)).toThrow(/op/);
      });
    });

    describe('lifetime', () => {
      it('is reported in info', () => {
        expect(backend.info.name).toBe(backend.name);
        expect(typeof backend.info.description).toBe('string');
        expect(typeof backend.info.software).toBe('boolean');
      });
      it('rejects calls after dispose with DisposedError; double dispose is harmless', async () => {
        const extra = await create();
        await expectConforms(extra, 'scan', scanCase('i32', 100, 1), extra.variants('scan')[0]!);
        await extra.dispose();
        await extra.dispose();
        expect(extra.disposed).toBe(true);
        await expect(extra.scan(scanCase('i32', 10, 1))).rejects.toBeInstanceOf(DisposedError);
        await expect(extra.conv2d(conv2dCase([1, 4, 4, 3], 1))).rejects.toBeInstanceOf(DisposedError);
      });
      it('supports await using (Symbol.asyncDispose)', async () => {
        const extra = await create();
        await extra[Symbol.asyncDispose]();
        expect(extra.disposed).toBe(true);
      });
    });
  });
}

interface CaseContext {
  readonly scale: CaseScale;
  readonly props: PropertySettings;
  readonly f64: boolean;
  readonly options: ConformanceOptions;
}

function defineOpCases(backend: Backend, op: OpName, variant: string, ctx: CaseContext): void {
  const { scale, props: settings } = ctx;
  const runs = `${settings.runs} runs, seed ${settings.seed}`;
  switch (op) {
    case 'conv2d': {
      const cases = scale === 'full' ? CONV2D_CASES : CONV2D_CASES.filter(([b, h, w]) => b * h * w <= 40_000);
      for (const c of cases) it(`${c.join('×')} (b×h×w×k)`, () => expectConforms(backend, 'conv2d', conv2dCase(c, 11), variant));
      it(`property: random shapes (${runs})`, async () => {
        await assertProperty(
          fc.asyncProperty(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 6 }), fc.integer(), async (b, h, w, kh, seed) =>
            expectConforms(backend, 'conv2d', conv2dCase([b, h, w, 2 * kh + 1], seed), variant),
          ),
          settings,
        );
      });
      return;
    }
    case 'stencil3d': {
      const cases = scale === 'full' ? STENCIL_CASES : STENCIL_CASES.filter(([x, y, z]) => x * y * z <= 40_000);
      for (const c of cases) it(`${c.slice(0, 3).join('×')}, ${c[3]} steps, ${c[4]}`, () => expectConforms(backend, 'stencil3d', stencilCase(c, 13), variant));
      it('custom coefficients', () => expectConforms(backend, 'stencil3d', { ...stencilCase([16, 12, 10, 3, 'copy'], 4), c0: 0.5, c1: -0.125 }, variant));
      if (ctx.f64) it('f64 grid', () => expectConforms(backend, 'stencil3d', stencilCase([19, 18, 17, 3, 'zero'], 4, 'f64'), variant));
      it(`property: random grids (${runs})`, async () => {
        await assertProperty(
          fc.asyncProperty(
            fc.integer({ min: 1, max: 20 }),
            fc.integer({ min: 1, max: 20 }),
            fc.integer({ min: 1, max: 20 }),
            fc.integer({ min: 0, max: 4 }),
            fc.constantFrom('zero' as const, 'copy' as const),
            fc.integer(),
            async (x, y, z, steps, boundary, seed) => expectConforms(backend, 'stencil3d', stencilCase([x, y, z, steps, boundary], seed), variant),
          ),
          settings,
        );
      });
      return;
    }
    case 'scan': {
      const maxLen = ctx.options.maxScanLength ?? Number.POSITIVE_INFINITY;
      const dtypes = (ctx.options.scanDtypes ?? (['u32', 'i32', 'f32', 'f64'] as const)).filter((d) => d !== 'f64' || ctx.f64);
      const lengths = SCAN_LENGTHS.filter((n) => n <= maxLen && (scale === 'full' || n <= 70_000));
      for (const dtype of dtypes) {
        it(`${dtype} inclusive, lengths ${lengths.join(', ')}`, async () => {
          for (const n of lengths) await expectConforms(backend, 'scan', scanCase(dtype, n, n + 1), variant);
        });
        it(`${dtype} exclusive with a carry-in`, async () => {
          for (const n of lengths.filter((n) => n <= 70_000)) {
            const initial = dtype === 'u32' ? 4_000_000_000 : dtype === 'i32' ? -123_456 : 2.5;
            await expectConforms(backend, 'scan', scanCase(dtype, n, n + 2, true, initial), variant);
          }
        });
      }
      it(`property: random lengths and dtypes (${runs})`, async () => {
        await assertProperty(
          fc.asyncProperty(fc.constantFrom(...dtypes), fc.integer({ min: 0, max: Math.min(5000, maxLen) }), fc.boolean(), fc.integer(), async (dtype, n, exclusive, seed) =>
            expectConforms(backend, 'scan', scanCase(dtype, n, seed, exclusive), variant),
          ),
          settings,
        );
      });
      return;
    }
    case 'gridSearch': {
      for (const c of GRID_CASES) it(c.name, () => expectConforms(backend, 'gridSearch', c.args, variant));
      it('CS610 files, 5 steps per dimension (5^10 points, 166 pass), identical point list', async () => {
        const full = cs610Problem(readFileSync(CS610_GRID_PATH, 'utf8'), readFileSync(CS610_DISP_PATH, 'utf8'));
        const args = reduceGrid(full, 5);
        const res = await backend.gridSearch(args, { variant });
        expect(res.data.count).toBeGreaterThan(0);
        expect(verifyResult('gridSearch', args, res.data, { grid: cs610Reduced5() })).toBeUndefined();
      });
      it('reports progress', async () => {
        const seen: number[] = [];
        await backend.gridSearch(GRID_CASES[0]!.args, { variant, onProgress: (p) => seen.push(p.done / p.total) });
        for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1]!);
        if (seen.length > 0) expect(seen.at(-1)).toBeLessThanOrEqual(1);
      });
      it(`property: random problems (${runs})`, async () => {
        await assertProperty(
          fc.asyncProperty(fc.integer(), async (seed) => expectConforms(backend, 'gridSearch', randomGridCase(seed), variant)),
          settings,
        );
      });
      return;
    }
    case 'convLayer': {
      const cases = scale === 'full' ? CONV_LAYER_CASES : CONV_LAYER_CASES.filter(([b, c, h, w]) => b * c * h * w <= 20_000);
      for (const c of cases) it(`${c.join('×')} (b×c×h×w×m×k)`, () => expectConforms(backend, 'convLayer', convLayerCase(c, 17), variant));
      it('fused bias and ReLU', () => expectConforms(backend, 'convLayer', convLayerCase([2, 3, 12, 10, 6, 3], 19, { bias: true, relu: true }), variant));
      it('bias without ReLU', () => expectConforms(backend, 'convLayer', convLayerCase([1, 2, 8, 8, 3, 3], 23, { bias: true }), variant));
      it(`property: random layers (${runs})`, async () => {
        await assertProperty(
          fc.asyncProperty(
            fc.integer({ min: 1, max: 3 }),
            fc.integer({ min: 1, max: 4 }),
            fc.integer({ min: 1, max: 7 }),
            fc.integer({ min: 0, max: 12 }),
            fc.integer({ min: 0, max: 12 }),
            fc.integer({ min: 1, max: 6 }),
            fc.integer(),
            async (b, c, k, dh, dw, m, seed) => expectConforms(backend, 'convLayer', convLayerCase([b, c, k + dh, k + dw, m, k], seed), variant),
          ),
          settings,
        );
      });
      return;
    }
  }
}

let cs610Cache: ReturnType<typeof gridSearchReference> | undefined;
function cs610Reduced5() {
  cs610Cache ??= gridSearchReference(validateGridSearch(reduceGrid(cs610Problem(readFileSync(CS610_GRID_PATH, 'utf8'), readFileSync(CS610_DISP_PATH, 'utf8')), 5)));
  return cs610Cache;
}

