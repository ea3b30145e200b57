import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ONE_PROCESS_PER_BACKEND, childArgs, runIsolated } from '../src/isolate.js';
import type { BenchOptions, BenchReport, Row } from '../src/types.js';

const FAKE_CHILD = fileURLToPath(new URL('./fixtures/fake-child.mjs', import.meta.url));
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const options: BenchOptions = { workload: 'tiny', ops: ['scan'], backends: ['piscina', 'cpu'], progress: false };

describe('one process per backend', () => {
  it('passes each child one backend, its own report file and --in-process', () => {
    const args = childArgs({ ...options, threads: 3, cases: ['scan-10k-u32'] }, 'cpu', '/tmp/x.json');
    expect(args).toEqual(['--workload', 'tiny', '--op', 'scan', '--backend', 'cpu', '--case', 'scan-10k-u32', '--threads', '3', '--json', '/tmp/x.json', '--in-process', '--no-progress', '--no-floor']);
  });

  it("merges the children's rows (CPU first) and turns a crashed child into errored rows quoting its stderr", async () => {
    const live: Row[] = [];
    const totals: number[] = [];
    const r = await runIsolated(options, FAKE_CHILD, { onRow: (row) => void live.push(row), onTotal: (n) => void totals.push(n), relayStderr: false });
    expect(r.isolation).toBe(ONE_PROCESS_PER_BACKEND);
    expect(r.partial).toBeUndefined();
    expect(totals).toEqual([2, 4]);
    expect(r.rows.map((x) => `${x.backend} ${x.caseId} ${x.status}`)).toEqual([
      'cpu scan-10k-u32 ok',
      'cpu scan-10k-f32 ok',
      'piscina scan-10k-u32 ok',
      'piscina scan-10k-f32 errored',
    ]);
    const lost = r.rows[3]!;
    expect(lost.status === 'errored' && lost.message).toMatch(/child process exited with code 3: piscina worker: Segmentation fault/);
    // The crashed child's row that arrived before the crash keeps its speed-up over the CPU child's baseline.
    const kept = r.rows[2]!;
    expect(kept.status === 'ok' && kept.speedupVsSequential).toBe(2);
    expect(r.backends.map((b) => `${b.backend} ${b.status}`)).toEqual(['cpu ok', 'piscina errored']);
    expect(r.backends[1]!.reason).toMatch(/Segmentation fault/);
    // Every row was reported as it landed, the lost one included.
    expect(live.map((x) => `${x.backend} ${x.caseId}`).sort()).toEqual(r.rows.map((x) => `${x.backend} ${x.caseId}`).sort());
  });

  it('the CLI runs two backends in two processes and says so in the report', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kk-bench-iso-'));
    const json = join(dir, 'r.json');
    const res = spawnSync(process.execPath, [CLI, '--workload', 'tiny', '--op', 'scan', '--case', 'scan-10k-u32', '--backend', 'cpu,piscina', '--threads', '2', '--json', json, '--md', join(dir, 'r.md')], { encoding: 'utf8', timeout: 90_000 });
    expect(res.status, res.stderr).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as BenchReport;
    expect(report.isolation).toBe(ONE_PROCESS_PER_BACKEND);
    expect(report.partial).toBeUndefined();
    expect(report.mergedFrom).toBeUndefined();
    expect(new Set(report.rows.map((x) => `${x.backend} ${x.status}`))).toEqual(new Set(['cpu ok', 'piscina ok']));
    expect(report.rows.find((x) => x.backend === 'piscina' && x.status === 'ok' && x.speedupVsSequential !== undefined)).toBeDefined();
    expect(readFileSync(join(dir, 'r.md'), 'utf8')).toContain(`Isolation: ${ONE_PROCESS_PER_BACKEND}.`);
    // The parent measured the floor once (its children ran with --no-floor), on the run's threads.
    expect(report.floor).toMatchObject({ bytes: 8 << 20, threads: 2 });
    expect(report.rows.every((x) => x.status !== 'ok' || x.outputBytes === 40_000)).toBe(true);
    // Each row was logged once, by the parent.
    expect(res.stderr.match(/scan scan-10k-u32 cpu\/\S+: median/g)?.length).toBe(report.rows.filter((x) => x.backend === 'cpu').length);
  });
});
