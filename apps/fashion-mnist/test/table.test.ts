import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatTable } from '../src/table.js';

const run = (backend: string, variant: string, correct: number, count = 100) => ({
  count,
  correct,
  accuracy: correct / count,
  conv1: { ms: 1.5, kind: 'kernel' },
  conv2: { ms: 20, kind: 'end-to-end' },
  totalMs: 30,
  backend,
  variant,
  chain: 'chained on the GPU',
});

describe('seeds table from --json files', () => {
  it('lists every run sorted by batch, backend and variant, and confirms equal accuracy', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fm-table-'));
    writeFileSync(join(dir, 'a.json'), JSON.stringify({ agree: true, results: [run('webgpu', 'gemm', 85), run('cpu', 'direct', 85)], skipped: [], disagreements: [] }));
    writeFileSync(join(dir, 'b.json'), JSON.stringify(run('cpu', 'direct', 887, 1000)));
    const md = formatTable(dir, 'T');
    const rows = md.split('\n').filter((l) => /^\| \d/.test(l));
    expect(rows.map((r) => r.split('|').slice(1, 4).map((s) => s.trim()).join(' '))).toEqual(['100 cpu direct', '100 webgpu gemm', '1000 cpu direct']);
    expect(rows[0]).toContain('1.500 (kernel)');
    expect(md).toContain('Batch 100: every run classified 85 of 100 correctly.');
  });

  it('flags runs of one batch size that differ, naming backend and file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fm-table-'));
    writeFileSync(join(dir, 'x.json'), JSON.stringify(run('cpu', 'direct', 85)));
    writeFileSync(join(dir, 'y.json'), JSON.stringify({ agree: false, results: [run('gpujs', 'kernel', 84)] }));
    const md = formatTable(dir, 'T');
    expect(md).toMatch(/Batch 100: \*\*runs differ\*\*: 85 correct: cpu\/direct \(x\.json\); 84 correct: gpujs\/kernel \(y\.json\)/);
    expect(md).toContain("y.json: the backends' labels disagree");
  });

  it('refuses a JSON file that is not a run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fm-table-'));
    writeFileSync(join(dir, 'z.json'), JSON.stringify({ hello: 1 }));
    expect(() => formatTable(dir, 'T')).toThrow(/z\.json: neither/);
  });
});
