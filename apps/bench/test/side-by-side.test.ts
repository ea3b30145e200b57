import { describe, expect, it } from 'vitest';
import { makeScanArgs, type Backend, type OpArgs, type OpName } from '@kernelkit/ops';
import { createCpuBackend } from '@kernelkit/cpu';
import type { BackendLoaders } from 'kernelkit';
import type { CallOutput, Contender } from '../src/backends.js';
import { parseBenchArgs } from '../src/args.js';
import { childArgs } from '../src/isolate.js';
import { formatMarkdown } from '../src/output/markdown.js';
import { formatTable } from '../src/output/table.js';
import { routerComparisons } from '../src/output/router-summary.js';
import { medianRounds } from '../src/rounds.js';
import { BLOCK_CALLS, candidatesOf, measureSideBySide, sideBySideRatio, turnsFor, type SideBySide } from '../src/side-by-side.js';
import type { BenchReport, Row } from '../src/types.js';

const args = makeScanArgs({ n: 64, dtype: 'u32' }) as OpArgs<OpName>;

/** A router stand-in that says it ran on cpu/wasm-simd after weighing it and piscina/wasm-simd. */
function router(): Contender & { calls: number } {
  const c = {
    name: 'kernelkit' as const,
    info: { description: 'stand-in', software: false },
    disposed: false,
    calls: 0,
    variants: () => ['routed'],
    call: async (): Promise<CallOutput> => {
      c.calls++;
      return { data: new Uint32Array(64), route: { settled: true, backend: 'cpu', variant: 'wasm-simd', trials: { 'cpu/wasm-simd': 1, 'piscina/wasm-simd': 2 } } };
    },
    dispose: async () => {},
  };
  return c;
}

describe('the router side by side with the backends it weighed', () => {
  it('takes the candidates from the trials and the pick, other backends left out', () => {
    expect(candidatesOf({ settled: true, backend: 'webgpu', variant: 'auto', trials: { 'piscina/wasm-simd': 3, 'onnxruntime/1t': 1 } })).toEqual([
      { backend: 'piscina', variant: 'wasm-simd' },
      { backend: 'webgpu', variant: 'auto' },
    ]);
    expect(candidatesOf(undefined)).toEqual([]);
  });

  it('times at least 3 and at most 15 turns of blocks, about the budget per contender', () => {
    expect(turnsFor(1000, 1200)).toBe(3);
    expect(turnsFor(25, 1200)).toBe(12);
    expect(turnsFor(0.001, 1200)).toBe(15);
  });

  it('opens each candidate, warms it, calls all in turn as often, names one that cannot start, and releases what it opened', async () => {
    const opened: Backend[] = [];
    const cpu = async () => {
      const b = createCpuBackend();
      opened.push(b);
      return b;
    };
    const loaders = { cpu, piscina: async () => Promise.reject(new Error('no pool here')), webgpu: cpu, gpujs: cpu } as unknown as BackendLoaders;
    const r = router();
    const warmed: string[] = [];
    const out = await measureSideBySide(r, 'scan', args, (await r.call('scan', args, {})).route, {
      threads: undefined,
      loaders,
      budgetMs: 20,
      warm: async (_b, v) => void warmed.push(v),
    });
    expect(warmed).toEqual(['wasm-simd']);
    expect(out.skipped).toEqual(['piscina/wasm-simd: no pool here']);
    const s = out.sideBySide!;
    expect(Object.keys(s.direct)).toEqual(['cpu/wasm-simd']);
    expect(s.turns).toBeGreaterThanOrEqual(3);
    // After the call that gave the route: one estimating call and a block per turn.
    expect(r.calls).toBe(1 + 1 + s.turns * BLOCK_CALLS);
    expect(s.routedTo).toEqual({ 'cpu/wasm-simd': s.turns * BLOCK_CALLS });
    expect(s.blockCalls).toBe(BLOCK_CALLS);
    expect(opened.every((b) => b.disposed)).toBe(true);
  });

  it('gives nothing to compare when no candidate could be called', async () => {
    const loaders = { cpu: async () => Promise.reject(new Error('none')) } as unknown as BackendLoaders;
    const out = await measureSideBySide(router(), 'scan', args, { settled: true, backend: 'cpu', variant: 'wasm-simd' }, { threads: undefined, loaders, budgetMs: 10, warm: async () => {} });
    expect(out).toEqual({ skipped: ['cpu/wasm-simd: none'] });
  });

  it('is on by default, off with --no-side-by-side, which the children get too', () => {
    expect(parseBenchArgs([], false).sideBySide).toBeUndefined();
    const o = parseBenchArgs(['--no-side-by-side', '--workload', 'tiny', '--op', 'scan'], false);
    expect(o.sideBySide).toBe(false);
    expect(childArgs(o, 'kernelkit', '/tmp/x.json')).toContain('--no-side-by-side');
    expect(childArgs(parseBenchArgs([], false), 'kernelkit', '/tmp/x.json')).not.toContain('--no-side-by-side');
  });
});

const ok = (backend: string, variant: string, medianMs: number, extra: Partial<Extract<Row, { status: 'ok' }>> = {}): Extract<Row, { status: 'ok' }> => ({
  op: 'scan', caseId: 'a', label: 'case a', backend: backend as Row['backend'], variant, status: 'ok', software: false, firstCallMs: medianMs,
  stats: { samples: 3, medianMs, meanMs: medianMs, p75Ms: medianMs, p99Ms: medianMs, minMs: medianMs, maxMs: medianMs },
  throughput: { value: 1, unit: 'GB/s' }, check: 'f64', ...extra,
});
const side = (routerMs: number, direct: Record<string, number>): SideBySide => ({ turns: 5, routerMs, routedTo: {}, direct });
const report = (rows: readonly Row[], rounds?: number): BenchReport => ({
  schema: 'kernelkit-bench/1', date: '2026-01-01T00:00:00.000Z', workload: 'tiny',
  machine: { cpu: 'test cpu', cores: 2, memoryGiB: 8, os: 'linux', node: 'v20', hostname: 'h' },
  backends: [], rows, wallMs: 10, checkPolicy: 'checked.', ...(rounds === undefined ? {} : { rounds }),
});

describe('the side-by-side figures in the report', () => {
  it('with rounds, keeps every round\'s timing and takes the medians of the ratios and of the best row there over its own', () => {
    const rounds = [
      [ok('piscina', 'wasm-simd', 4), ok('kernelkit', 'routed', 6, { routedTo: 'piscina/wasm-simd', sideBySide: side(6, { 'piscina/wasm-simd': 6, 'cpu/wasm-simd': 9 }) })],
      [ok('piscina', 'wasm-simd', 5), ok('kernelkit', 'routed', 5.5, { routedTo: 'piscina/wasm-simd', sideBySide: side(5.5, { 'piscina/wasm-simd': 5, 'cpu/wasm-simd': 9 }) })],
      [ok('piscina', 'wasm-simd', 6), ok('kernelkit', 'routed', 5, { routedTo: 'piscina/wasm-simd', sideBySide: side(5, { 'piscina/wasm-simd': 4.4, 'cpu/wasm-simd': 4 }) })],
    ];
    const rows = medianRounds(rounds);
    const routerRow = rows.find((r) => r.backend === 'kernelkit') as Extract<Row, { status: 'ok' }>;
    expect(routerRow.roundSideBySide?.map(sideBySideRatio)).toEqual([1, 1.1, 1.25]);
    const [c] = routerComparisons(rows, 3);
    expect(c!.sideBySide).toBeCloseTo(1.1);
    // piscina there over its own row: 6/4, 5/5, 4.4/6.
    expect(c!.bestHereOverOwn).toBeCloseTo(1);
    expect(c!.bestBeside).toBe(true);
    const md = formatMarkdown(report(rows, 3));
    expect(md).toContain('1 of 1 within 1.1× side by side');
    expect(md).toMatch(/\| side by side \| best there ÷ own \|\n/);
    expect(md).toContain('| 1.10× | 1.00× |');
    expect(formatTable(report(rows, 3))).toContain('side by side in its process 1 of 1');
    // Rows from before blocks say one call each; rows with blocks say how many.
    expect(md).toContain('called in turn with the router, one call each,');
    const inBlocks = rows.map((r) => (r.status === 'ok' && r.sideBySide ? { ...r, sideBySide: { ...r.sideBySide, blockCalls: 4 } } : r));
    expect(formatMarkdown(report(inBlocks, 3))).toContain('called in turn with the router, 4 calls back to back each (the first untimed),');
    const ledIn = rows.map((r) => (r.status === 'ok' && r.sideBySide ? { ...r, sideBySide: { ...r.sideBySide, leadInMs: 75, timedCalls: 3 } } : r));
    expect(formatMarkdown(report(ledIn, 3))).toContain('called in turn with the router, untimed calls for 75 ms (one at least), then 3 timed, back to back each,');
  });

  it("marks a ratio whose run's best row was not among the candidates beside the router, and leaves the columns out of reports without the timing", () => {
    const rows = [ok('webgpu', 'auto', 2), ok('kernelkit', 'routed', 3, { sideBySide: side(3, { 'cpu/wasm-simd': 3 }) })];
    expect(formatMarkdown(report(rows))).toContain('| 1.00× (best row not beside it) | — |');
    expect(formatMarkdown(report([ok('cpu', 'wasm-simd', 2), ok('kernelkit', 'routed', 3)]))).not.toContain('side by side');
  });
});
