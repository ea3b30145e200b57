/**
 * The built CLI (dist/cli.js) exits by itself with each backend kind open, and on errors raised
 * before and after a backend starts: a live worker pool or GPU device would keep it running into
 * the timeout. cli.test.ts covers the cpu and auto runs; build the app first.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_DIR, TEST_DATA_DIR, splitFiles } from '../src/paths.js';
import { expectExitCode, spawnCli } from '@kernelkit/ops/testing';

const CLI = join(APP_DIR, 'dist', 'cli.js');
const app = (args: readonly string[]) => spawnCli(CLI, args, { timeoutMs: 60_000 });

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fm-exits-'));
});
afterAll(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('kernelkit-fashion-mnist exits by itself', () => {
  it('--backend piscina: the worker pool does not keep it alive', async () => {
    const r = await app(['--batch', '100', '--backend', 'piscina', '--json']);
    expectExitCode(r, 0);
    const out = JSON.parse(r.stdout) as { count: number; backend: string; accuracy: number };
    expect(out).toMatchObject({ count: 100, backend: 'piscina' });
    expect(out.accuracy).toBeGreaterThan(0.5);
  });

  it('--compare: every available backend open at once, then all disposed', async () => {
    // Four backends one after another: slower than the others, so a longer limit (a hang still fails).
    const r = await spawnCli(CLI, ['--batch', '100', '--compare', '--json'], { timeoutMs: 120_000 });
    expectExitCode(r, 0);
    const out = JSON.parse(r.stdout) as { agree: boolean; results: { backend: string; count: number }[]; skipped: { backend: string }[] };
    expect(out.agree).toBe(true);
    expect([...out.results.map((x) => x.backend), ...out.skipped.map((s) => s.backend)].sort()).toEqual(['cpu', 'gpujs', 'piscina', 'webgpu']);
    expect(out.results.map((x) => x.backend)).toContain('cpu');
    for (const x of out.results) expect(x.count).toBe(100);
  }, 180_000);

  it('a usage error raised after the worker pool started (exit 2)', async () => {
    const r = await app(['--batch', '100', '--backend', 'piscina', '--variant', 'nope']);
    expectExitCode(r, 2);
    expect(r.stderr).toMatch(/--variant: the piscina backend has no convLayer variant "nope"/);
  });

  it('a truncated labels file (exit 1), named with its byte offset', async () => {
    const real = splitFiles(TEST_DATA_DIR, 't10k');
    const bad = splitFiles(dir, 't10k');
    await copyFile(real.images, bad.images);
    const labels = await readFile(real.labels);
    await writeFile(bad.labels, labels.subarray(0, labels.length >> 1));
    const r = await app(['--batch', '100', '--backend', 'cpu', '--data', dir]);
    expectExitCode(r, 1);
    expect(r.stderr).toContain(`${bad.labels}: gzip stream truncated: the compressed data ends at byte offset ${labels.length >> 1}`);
  });
});
