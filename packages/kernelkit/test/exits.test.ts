/**
 * Every `kernelkit` command exits by itself, on success and on errors raised after a backend is
 * open: a worker pool or a GPU device left alive would keep the process running into the timeout.
 * Runs the built CLI (build first: `npx tsc -p tsconfig.json`). cli.test.ts covers `doctor --json`
 * and the argument errors raised before any backend starts.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectExitCode, spawnCli } from '@kernelkit/ops/testing';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const PKG = fileURLToPath(new URL('..', import.meta.url));
const env = { ...process.env, KERNELKIT_BACKEND: '', KERNELKIT_ADAPTER: '' };
const kernelkit = (args: readonly string[]) => spawnCli(CLI, args, { cwd: PKG, env, timeoutMs: 60_000 });

/**
 * 4 points per axis (0.5, 1, 1.5, 2): 4^10 ≈ 10^6 grid points, above the Piscina backend's inline
 * threshold, so its workers really run. Constraints 1–8 pin x1..x8 to 0.5 and 9–10 admit
 * everything, so exactly the 16 points (0.5 ×8, a, b) for a, b in the axis pass.
 */
const GRID = Array.from({ length: 10 }, () => '0.5 2.5 0.5').join('\n') + '\n';
const DISP =
  Array.from({ length: 10 }, (_, i) => {
    const row = new Array<number>(10).fill(0);
    if (i < 8) row[i] = 1;
    return [...row, i < 8 ? 0.5 : 0, i < 8 ? 0.01 : 1].join(' ');
  }).join('\n') + '\n';
const AXIS = ['0.500000', '1.000000', '1.500000', '2.000000'];
const EXPECTED = AXIS.flatMap((a) => AXIS.map((b) => [...new Array<string>(8).fill('0.500000'), a, b].join('\t') + '\n')).join('');

let dir = '';
let grid = '';
let disp = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kk-exits-'));
  grid = join(dir, 'grid.txt');
  disp = join(dir, 'disp.txt');
  await writeFile(grid, GRID);
  await writeFile(disp, DISP);
});
afterAll(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('kernelkit exits by itself', () => {
  it('doctor (text report)', async () => {
    const r = await kernelkit(['doctor']);
    expectExitCode(r, 0);
    for (const b of ['webgpu', 'piscina', 'cpu', 'gpujs']) expect(r.stdout).toMatch(new RegExp(`^  ${b} +(available|unavailable)`, 'm'));
    expect(r.stdout).toContain('auto-selection picks:');
  });

  it.each([
    ['cpu', []],
    ['piscina', ['--threads', '2']],
    ['gpujs', []],
    ['webgpu', ['--adapter', 'software']],
  ] as const)('grid-search --backend %s writes the 16 expected points', async (backend, extra) => {
    const out = join(dir, `results-${backend}.txt`);
    const r = await kernelkit(['grid-search', '--grid', grid, '--disp', disp, '--out', out, '--backend', backend, ...extra, '--json']);
    expectExitCode(r, 0);
    const summary = JSON.parse(r.stdout) as { count: number; backend: string; notes: string[] };
    expect(summary.backend).toBe(backend);
    expect(summary.count).toBe(16);
    // Inline runs never start a task, so they would not show that finished workers let the process go.
    if (backend === 'piscina') expect(summary.notes.join(' ')).not.toMatch(/inline/);
    expect(await readFile(out, 'utf8')).toBe(EXPECTED);
  });

  it('grid-search with the auto-selected backend', async () => {
    const out = join(dir, 'results-auto.txt');
    const r = await kernelkit(['grid-search', '--grid', grid, '--disp', disp, '--out', out]);
    expectExitCode(r, 0);
    expect(r.stdout).toMatch(/^16 points in [\d.]+ s on \w+ /);
    expect(await readFile(out, 'utf8')).toBe(EXPECTED);
  });

  it.each([
    ['piscina', []],
    ['webgpu', ['--adapter', 'software']],
  ] as const)('a usage error raised once the %s backend is open (exit 2)', async (backend, extra) => {
    const r = await kernelkit(['grid-search', '--grid', grid, '--disp', disp, '--out', join(dir, 'never.txt'), '--backend', backend, ...extra, '--variant', 'warp']);
    expectExitCode(r, 2);
    expect(r.stderr).toContain(`kernelkit: --variant: the ${backend} backend has no grid-search variant "warp"`);
  });
});
