import { describe, expect, it } from 'vitest';
import { formatMarkdown } from '../src/output/markdown.js';
import { formatTable } from '../src/output/table.js';
import { routerComparisons, routerSummaryMarkdown } from '../src/output/router-summary.js';
import type { BenchReport, Row } from '../src/types.js';

const ok = (caseId: string, backend: string, variant: string, medianMs: number, extra: Partial<Extract<Row, { status: 'ok' }>> = {}): Row => ({
  op: 'scan', caseId, label: `case ${caseId}`, backend: backend as Row['backend'], variant, status: 'ok', software: false, firstCallMs: medianMs,
  stats: { samples: 3, medianMs, meanMs: medianMs, p75Ms: medianMs, p99Ms: medianMs, minMs: medianMs, maxMs: medianMs },
  throughput: { value: 1, unit: 'GB/s' }, check: 'f64', ...extra,
});

const report = (rows: readonly Row[]): BenchReport => ({
  schema: 'kernelkit-bench/1', date: '2026-01-01T00:00:00.000Z', workload: 'tiny',
  machine: { cpu: 'test cpu', cores: 4, memoryGiB: 8, os: 'linux', node: 'v20', hostname: 'h' },
  backends: [], rows, wallMs: 10, checkPolicy: 'checked.',
});

const ROWS: readonly Row[] = [
  ok('a', 'cpu', 'wasm-simd', 10),
  ok('a', 'piscina', 'wasm-simd', 4),
  ok('a', 'webgpu', 'decoupled', 5),
  // A peer faster than every backend: the router cannot pick it, so it is not the best row.
  ok('a', 'onnxruntime', '1t', 1),
  ok('a', 'kernelkit', 'routed', 4.2, { roundRoutes: ['piscina/wasm-simd', 'webgpu/decoupled'] }),
  ok('b', 'cpu', 'wasm-simd', 2),
  ok('b', 'kernelkit', 'routed', 3, { routedTo: 'cpu/wasm-simd' }),
  // No other backend measured this case: nothing to compare.
  ok('c', 'kernelkit', 'routed', 1),
  // The router errored here: no comparison either.
  { op: 'scan', caseId: 'd', label: 'case d', backend: 'kernelkit', variant: 'routed', status: 'errored', message: 'x' },
  ok('d', 'cpu', 'wasm-simd', 1),
];

describe('the router against the best single backend', () => {
  it('compares each case with an ok router row against the fastest other kernelkit row, peers left out', () => {
    const c = routerComparisons(ROWS);
    expect(c.map((x) => [x.label, `${x.best.backend}/${x.best.variant}`, +x.ratio.toFixed(3)])).toEqual([
      ['case a', 'piscina/wasm-simd', 1.05],
      ['case b', 'cpu/wasm-simd', 1.5],
    ]);
  });

  it('prints a section with where the router ran and how many cases are within 1.1×, and none without router rows', () => {
    const md = formatMarkdown(report(ROWS));
    expect(md).toContain('## The router against the best single backend');
    expect(md).toContain('1 of 2 within 1.1×');
    expect(md).toContain('| scan | case a | 4.200 ms | piscina/wasm-simd · webgpu/decoupled | piscina/wasm-simd | 4.000 ms | 1.05× |');
    expect(md).toContain('| scan | case b | 3.000 ms | cpu/wasm-simd | cpu/wasm-simd | 2.000 ms | 1.50× |');
    const table = formatTable(report(ROWS));
    expect(table).toContain('Router against the best single backend: 1 of 2 cases within 1.1×');
    expect(table).toContain('  scan a: 1.05× (4.200 ms on piscina/wasm-simd · webgpu/decoupled; best piscina/wasm-simd 4.000 ms)');
    expect(formatTable(report(ROWS.filter((r) => r.backend !== 'kernelkit')))).not.toContain('Router against');
    expect(routerSummaryMarkdown(report(ROWS.filter((r) => r.backend !== 'kernelkit')))).toEqual([]);
    expect(formatMarkdown(report(ROWS.filter((r) => r.backend !== 'kernelkit')))).not.toContain('The router against');
  });

  it('with rounds, adds the per-round ratio (rows measured in every round only) and the best row\'s own spread', () => {
    const rows: readonly Row[] = [
      ok('a', 'piscina', 'wasm-simd', 4, { roundMediansMs: [4, 8, 2] }),
      ok('a', 'kernelkit', 'routed', 5, { roundMediansMs: [5, 6, 3] }),
      ok('b', 'cpu', 'wasm-simd', 2, { roundMediansMs: [2, 3, 2] }),
      // One of b's rounds did not measure the router: no pairing by position.
      ok('b', 'kernelkit', 'routed', 3, { roundMediansMs: [3, 3] }),
    ];
    const [a, b] = routerComparisons(rows, 3);
    expect(a).toMatchObject({ ratio: 1.25, perRoundRatio: 1.25, bestSpread: 4 });
    expect(b).toMatchObject({ ratio: 1.5, bestSpread: 1.5 });
    expect(b).not.toHaveProperty('perRoundRatio');
    const md = formatMarkdown({ ...report(rows), rounds: 3 });
    expect(md).toContain("| router ÷ best | per round | best's spread |");
    expect(md).toContain('| scan | case a | 5.000 ms | — | piscina/wasm-simd | 4.000 ms | 1.25× | 1.25× | 4.00× |');
    expect(md).toContain('| scan | case b | 3.000 ms | — | cpu/wasm-simd | 2.000 ms | 1.50× | — | 1.50× |');
  });
});
