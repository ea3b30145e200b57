import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '@kernelkit/cpu';
import type { BackendLoaders } from 'kernelkit';
import { mergeReports } from '../src/merge.js';
import { runBench } from '../src/run.js';
import type { BenchOptions, BenchReport } from '../src/types.js';

const unused = async (): Promise<never> => {
  throw new Error('only the cpu backend runs in these tests');
};
const loaders: BackendLoaders = { cpu: async () => createCpuBackend(), piscina: unused, webgpu: unused, gpujs: unused };
const base: BenchOptions = { workload: 'tiny', ops: ['scan'], backends: ['cpu'], progress: false };

describe('partial reports and merging', () => {
  it('hands a partial report to onPartial after every row, then returns a complete one', async () => {
    const partials: BenchReport[] = [];
    const r = await runBench(base, { loaders, onPartial: (p) => void partials.push(p) });
    expect(r.partial).toBeUndefined();
    expect(partials.length).toBe(r.rows.length);
    partials.forEach((p, i) => {
      // tiny scan: u32 and f32 cases, one backend, one row per variant
      expect(p.partial).toEqual({ pairsDone: new Set(p.rows.map((x) => x.caseId)).size, pairsPlanned: 2 });
      expect(p.rows.length).toBe(i + 1);
    });
    expect(partials.at(-1)?.partial?.pairsDone).toBe(2);
    expect(r.sequentialBaseline?.scan).toBe(createCpuBackend().variants('scan')[0]);
  });

  it('merges parts split by op into one report with speed-ups recomputed against the CPU baseline', async () => {
    const scan = await runBench(base, { loaders });
    const conv = await runBench({ ...base, ops: ['conv2d'] }, { loaders });
    const m = mergeReports([
      { name: 'a.json', report: scan },
      { name: 'b.json', report: conv },
    ]);
    expect(m.rows.length).toBe(scan.rows.length + conv.rows.length);
    expect(m.mergedFrom).toEqual(['a.json', 'b.json']);
    expect(m.sequentialBaseline).toMatchObject({ scan: scan.sequentialBaseline?.scan, conv2d: conv.sequentialBaseline?.conv2d });
    const cpuConv = m.rows.find((r) => r.op === 'conv2d' && r.backend === 'cpu' && r.variant === m.sequentialBaseline?.conv2d);
    expect(cpuConv?.status === 'ok' && cpuConv.speedupVsSequential).toBe(1);
    expect(m.wallMs).toBeCloseTo(scan.wallMs + conv.wallMs);
  });

  it('a row measured in two parts keeps the later measurement', async () => {
    const a = await runBench(base, { loaders });
    const b = await runBench(base, { loaders });
    const m = mergeReports([
      { name: 'a.json', report: a },
      { name: 'b.json', report: b },
    ]);
    expect(m.rows.length).toBe(a.rows.length);
    const first = m.rows[0]!;
    const later = b.rows.find((r) => r.caseId === first.caseId && r.variant === first.variant);
    expect(first.status === 'ok' && later?.status === 'ok' && first.stats).toEqual(later?.status === 'ok' && later.stats);
  });

  it('keeps the rounds of parts all run with the same --rounds, and only then', async () => {
    const a = await runBench(base, { loaders });
    const b = await runBench({ ...base, ops: ['conv2d'] }, { loaders });
    const both = (ra?: number, rb?: number) =>
      mergeReports([
        { name: 'a.json', report: { ...a, ...(ra ? { rounds: ra } : {}) } },
        { name: 'b.json', report: { ...b, ...(rb ? { rounds: rb } : {}) } },
      ]).rounds;
    expect(both(3, 3)).toBe(3);
    expect(both(3, 5)).toBeUndefined();
    expect(both(3, undefined)).toBeUndefined();
    expect(both()).toBeUndefined();
  });

  it('refuses parts from another workload or another machine, naming the file', async () => {
    const a = await runBench(base, { loaders });
    expect(() => mergeReports([])).toThrow(/no reports/);
    expect(() => mergeReports([{ name: 'a.json', report: a }, { name: 'b.json', report: { ...a, workload: 'small' } }])).toThrow(/b\.json is the small workload/);
    expect(() => mergeReports([{ name: 'a.json', report: a }, { name: 'c.json', report: { ...a, machine: { ...a.machine, hostname: 'elsewhere' } } }])).toThrow(/c\.json ran on elsewhere/);
  });

  it('notes parts that stopped early', async () => {
    const a = await runBench(base, { loaders });
    const m = mergeReports([{ name: 'cut.json', report: { ...a, partial: { pairsDone: 1, pairsPlanned: 9 } } }]);
    expect(m.checkPolicy).toMatch(/stopped before their end.*cut\.json/);
    expect(m.stoppedParts).toEqual(['cut.json']);
    // Merging the merged report again keeps the list once, in the note and in the field.
    const again = mergeReports([{ name: 'merged.json', report: m }, { name: 'late.json', report: { ...a, partial: { pairsDone: 2, pairsPlanned: 9 } } }]);
    expect(again.stoppedParts).toEqual(['cut.json', 'late.json']);
    expect(again.checkPolicy.match(/stopped before their end/g)).toHaveLength(1);
    // A report merged before the field existed carries the list in its note only.
    const { stoppedParts: _s, ...old } = m;
    expect(mergeReports([{ name: 'old.json', report: old }]).stoppedParts).toEqual(['cut.json']);
  });
});
