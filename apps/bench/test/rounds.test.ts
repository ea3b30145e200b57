import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runIsolated } from '../src/isolate.js';
import { formatMarkdown } from '../src/output/markdown.js';
import { medianRounds } from '../src/rounds.js';
import type { BenchOptions, Row } from '../src/types.js';

const FAKE_CHILD = fileURLToPath(new URL('./fixtures/fake-child-rounds.mjs', import.meta.url));

const ok = (backend: 'cpu' | 'piscina', medianMs: number, firstCallMs = 0): Row => ({
  status: 'ok', op: 'scan', caseId: 'c', label: 'c', backend, variant: 'v', software: false, firstCallMs,
  stats: { samples: 3, medianMs, meanMs: medianMs, p75Ms: medianMs, p99Ms: medianMs, minMs: medianMs, maxMs: medianMs },
  throughput: { value: 1, unit: 'GB/s' }, check: 'x',
});
const errored = (backend: 'cpu' | 'piscina', message: string): Row => ({ status: 'errored', op: 'scan', caseId: 'c', label: 'c', backend, variant: 'v', message });

describe('rounds', () => {
  it('keeps, whole, the round whose median is the median of the rounds (the lower middle for an even count)', () => {
    const [three] = medianRounds([[ok('cpu', 5, 1)], [ok('cpu', 9, 2)], [ok('cpu', 7, 3)]]);
    expect(three).toMatchObject({ firstCallMs: 3, stats: { medianMs: 7 }, roundMediansMs: [5, 9, 7] });
    const [four] = medianRounds([[ok('cpu', 5)], [ok('cpu', 9)], [ok('cpu', 7)], [ok('cpu', 6)]]);
    expect(four).toMatchObject({ stats: { medianMs: 6 }, roundMediansMs: [5, 9, 7, 6] });
  });

  it("lists where each round of a router row sent its calls, in the 'rounds' column too", () => {
    const routed = (medianMs: number, routedTo: string): Row => ({ ...ok('cpu', medianMs), backend: 'kernelkit', variant: 'routed', routedTo, notes: ['routed to x', `router settled after ${medianMs} calls`] }) as Row;
    const [row] = medianRounds([[routed(5, 'piscina/wasm-simd')], [routed(9, 'webgpu/gemm')], [routed(7, 'piscina/wasm-simd')]]);
    expect(row).toMatchObject({ stats: { medianMs: 7 }, routedTo: 'piscina/wasm-simd', roundRoutes: ['piscina/wasm-simd', 'webgpu/gemm', 'piscina/wasm-simd'] });
    // Each round's own account of how it settled, for the rounds that went elsewhere.
    expect(row).toMatchObject({ roundRouterNotes: ['router settled after 5 calls', 'router settled after 9 calls', 'router settled after 7 calls'] });
    const report = { schema: 'kernelkit-bench/1', date: '2026-11-24', workload: 'tiny', machine: { cpu: 'x', cores: 2, memoryGiB: 1, os: 'x', node: 'x', hostname: 'x' }, backends: [], rows: [row!], wallMs: 1, checkPolicy: 'x', rounds: 3 } as const;
    const md = formatMarkdown(report);
    expect(md).toContain('| 7.000 ms | 5.000 ms (piscina/wasm-simd) · 9.000 ms (webgpu/gemm) · 7.000 ms (piscina/wasm-simd) |');
    expect(md).toContain('Machine: x, 2 cores, 1 GiB');
    // A process pinned to some of the machine's cores says so.
    const pinned = formatMarkdown({ ...report, machine: { ...report.machine, hostCores: 16 } });
    expect(pinned).toContain("Machine: x, 2 cores (of the machine's 16), 1 GiB");
  });

  it('leaves out rounds that did not measure a row, and keeps the last error of a row no round measured', () => {
    const rows = medianRounds([[ok('cpu', 5), errored('piscina', 'first')], [errored('cpu', 'crash'), errored('piscina', 'second')], [ok('cpu', 8)]]);
    expect(rows[0]).toMatchObject({ status: 'ok', stats: { medianMs: 5 }, roundMediansMs: [5, 8] });
    expect(rows[1]).toMatchObject({ status: 'errored', message: 'second' });
    // One measured round: the row as it was, with no list of one.
    expect(medianRounds([[ok('cpu', 5)]])[0]).not.toHaveProperty('roundMediansMs');
  });

  it('runs every backend once per round, keeps each row its median round and works out speed-ups among the kept rows', async () => {
    const options: BenchOptions = { workload: 'tiny', ops: ['scan'], backends: ['piscina', 'cpu'], progress: false, floor: false, rounds: 3 };
    const totals: number[] = [];
    const r = await runIsolated(options, FAKE_CHILD, { onTotal: (n) => void totals.push(n), relayStderr: false });
    expect(totals).toEqual([1, 2, 3, 4, 5, 6]);
    expect(r.rounds).toBe(3);
    expect(r.rows.map((x) => (x.status === 'ok' ? [x.backend, x.stats.medianMs, x.roundMediansMs, x.speedupVsSequential] : x.status))).toEqual([
      ['cpu', 4, [6, 2, 4], 1],
      ['piscina', 2, [3, 1, 2], 2],
    ]);
    const md = formatMarkdown(r);
    expect(md).toContain('Rounds: each backend ran in 3 child processes');
    expect(md).toContain('| 2.000 ms | 3.000 ms · 1.000 ms · 2.000 ms |');
  });
});
