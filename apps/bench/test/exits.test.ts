/**
 * The bench CLI exits by itself after opening every backend (a worker pool or a GPU device left
 * alive would keep it running into the timeout). Runs the built CLI (build first). e2e.test.ts
 * covers the cpu-only run and its outputs; args.test.ts the usage errors (exit 2).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCH_BACKENDS } from '../src/backends.js';
import type { BenchReport } from '../src/types.js';
import { expectExitCode, spawnCli } from '@kernelkit/ops/testing';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const bench = (args: readonly string[]) => spawnCli(CLI, args, { timeoutMs: 60_000 });

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kk-bench-exits-'));
});
afterAll(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('kernelkit-bench exits by itself', () => {
  it('after measuring one tiny case on every backend', async () => {
    const json = join(dir, 'all.json');
    const r = await bench(['--workload', 'tiny', '--op', 'scan', '--case', 'scan-10k-u32', '--json', json]);
    expectExitCode(r, 0);
    const report = JSON.parse(await readFile(json, 'utf8')) as BenchReport;
    expect(report.partial).toBeUndefined();
    // Every backend was tried; one that cannot start here is skipped with its reason, never errored.
    expect(report.backends.map((b) => b.backend).sort()).toEqual([...BENCH_BACKENDS].sort());
    expect(report.rows.filter((row) => row.status === 'errored')).toEqual([]);
    for (const b of report.backends.filter((s) => s.status === 'ok')) {
      expect(report.rows.some((row) => row.backend === b.backend && row.status === 'ok'), `no ok row for ${b.backend}`).toBe(true);
    }
    expect(report.rows.find((row) => row.backend === 'cpu')?.status).toBe('ok');
  });

  it('after running tasks on the Piscina workers', async () => {
    const json = join(dir, 'piscina.json');
    // grid-cs610-4 (4^10 points) is the tiny case above the pool's inline threshold: the workers really run.
    const r = await bench(['--workload', 'tiny', '--backend', 'piscina', '--threads', '2', '--op', 'gridSearch', '--case', 'grid-cs610-4', '--json', json]);
    expectExitCode(r, 0);
    const report = JSON.parse(await readFile(json, 'utf8')) as BenchReport;
    // One row per gridSearch variant of the pool.
    expect(report.rows.length).toBeGreaterThan(0);
    for (const row of report.rows) {
      expect(row).toMatchObject({ status: 'ok', backend: 'piscina', caseId: 'grid-cs610-4' });
      if (row.status === 'ok') expect((row.notes ?? []).join(' ')).not.toMatch(/inline/);
    }
  });
});
