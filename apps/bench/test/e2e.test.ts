import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { BenchReport } from '../src/types.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

describe('end to end', () => {
  it('--op scan --backend cpu on the tiny workload writes valid JSON, markdown and charts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kk-bench-'));
    const json = join(dir, 'r.json');
    const r = spawnSync(process.execPath, [CLI, '--workload', 'tiny', '--op', 'scan', '--backend', 'cpu', '--case', 'scan-10k-u32', '--json', json, '--md', join(dir, 'r.md'), '--svg', join(dir, 'svg')], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as BenchReport;
    expect(report.schema).toBe('kernelkit-bench/1');
    expect(report.machine.cores).toBeGreaterThan(0);
    // Both cpu scan variants, the JavaScript kernel first (the ladder's order).
    expect(report.rows.map((row) => row.variant)).toEqual(['sequential', 'wasm-simd']);
    const row = report.rows[1]!;
    expect(row).toMatchObject({ status: 'ok', op: 'scan', backend: 'cpu', caseId: 'scan-10k-u32', check: 'f64 reference' });
    if (row.status === 'ok') {
      expect(row.stats.samples).toBeGreaterThanOrEqual(3);
      expect(row.stats.medianMs).toBeGreaterThan(0);
      expect(row.throughput.unit).toBe('GB/s');
    }
    expect(readFileSync(join(dir, 'r.md'), 'utf8')).toContain('## Prefix sum');
    expect(readdirSync(join(dir, 'svg'))).toEqual(['scan.svg']);
    expect(r.stdout).toContain('scan-10k-u32');
  });

  it('--json - puts only the report on stdout (valid JSON); the table and row log go to stderr', () => {
    const r = spawnSync(process.execPath, [CLI, '--workload', 'tiny', '--op', 'scan', '--backend', 'cpu', '--case', 'scan-10k-f32', '--variant', 'wasm-simd', '--json', '-'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as BenchReport;
    expect(report.rows.map((row) => `${row.caseId} ${row.backend} ${row.status}`)).toEqual(['scan-10k-f32 cpu ok']);
    expect(report.partial).toBeUndefined();
    expect(r.stderr).toMatch(/^op +case +backend/m);
    expect(r.stderr).toContain('1 rows in');
  });

  it('--md - puts the markdown report on stdout', () => {
    const r = spawnSync(process.execPath, [CLI, '--workload', 'tiny', '--op', 'scan', '--backend', 'cpu', '--case', 'scan-10k-u32', '--md', '-'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^# kernelkit bench — tiny workload/);
    expect(r.stdout).toContain('## Prefix sum');
    expect(r.stdout).not.toMatch(/^op +case +backend/m);
  });
});
