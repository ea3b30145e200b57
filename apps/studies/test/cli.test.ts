import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const run = (script: string, args: readonly string[]) => spawnSync(process.execPath, [`${dist}${script}`, ...args], { encoding: 'utf8', timeout: 110_000 });

describe('study command lines (run `npm run build -w @kernelkit/studies` first)', () => {
  it('a bad option exits with 2 and names the option; --help exits with 0', () => {
    const bad = run('webgpu/steady.js', ['--reps', '0']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--reps/);
    expect(run('piscina/scaling.js', []).status).toBe(2);
    const help = run('piscina/threshold.js', ['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/--runs <n>/);
  });
  it('shared-cache refuses a case its workload lacks, naming --cases, before any work', () => {
    const r = run('router/shared-cache.js', ['--cases', 'conv2d-9x9']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--cases .*conv2d-9x9/);
  });
  it('threshold measures a scan ladder inline and pooled', () => {
    const r = run('piscina/threshold.js', ['--ops', 'scan', '--runs', '1', '--threads', '1']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^scan: pool wins from /m);
    expect(r.stdout.match(/ u32 +work /g)).toHaveLength(9);
  });
  it('phases times a pooled conv call beside the cpu backend, phase by phase', () => {
    expect(run('piscina/phases.js', ['--cases', 'conv2d-9x9']).status).toBe(2);
    const r = run('piscina/phases.js', ['--cases', 'conv2d-1x1024-k5', '--calls', '2', '--threads', '2']);
    expect(r.status, r.stderr).toBe(0);
    const row = r.stdout.split('\n').find((l) => l.startsWith('| conv2d 1024² K=5 |'));
    // case, then 11 figures: the two call times, their ratio, and the phases.
    const cells = row?.split('|').slice(2, -1).map((c) => c.trim()) ?? [];
    expect(cells).toHaveLength(11);
    expect(cells.every((c) => /^\d+\.\d\d( \/ \d+\.\d\d)?$/.test(c)), row).toBe(true);
  });
});
