/** The built CLI (dist/cli.js) classifies, reports and exits by itself. Needs `npm run build` first. */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APP_DIR } from '../src/paths.js';

const CLI = join(APP_DIR, 'dist', 'cli.js');

function cli(args: string[]): { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string } {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build the app first (npx tsc -p tsconfig.json)`);
  // A process that does not exit on its own (a live worker pool or GPU device) hits the timeout and is killed with SIGTERM.
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 240_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

describe('cli', () => {
  it('classifies 100 images on cpu, prints JSON and exits by itself', () => {
    const r = cli(['--batch', '100', '--backend', 'cpu', '--json']);
    expect(r.signal, r.stderr).toBeNull();
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { count: number; backend: string; accuracy: number; conv1: { kind: string } };
    expect(out.count).toBe(100);
    expect(out.backend).toBe('cpu');
    expect(out.accuracy).toBeGreaterThan(0.5);
    expect(['kernel', 'end-to-end']).toContain(out.conv1.kind);
  }, 300_000);

  it('prints the seed-style report through the facade and exits by itself', () => {
    const r = cli(['--batch', '100']);
    expect(r.signal, r.stderr).toBeNull();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Op Time: [\d.]+ ms {2}\(layer 1[^\n]*\nOp Time: [\d.]+ ms {2}\(layer 2/);
    expect(r.stdout).toMatch(/Correctness: 0\.\d{4} \(\d+\/100\)/);
    expect(r.stdout).toMatch(/Backend: (cpu|piscina|webgpu|gpujs), variant: /);
  }, 300_000);

  it('rejects a batch size outside 100|1000|10000 as a usage error (exit code 2)', () => {
    const r = cli(['--batch', '7']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^kernelkit-fashion-mnist: option '--batch <n>' argument '7' is invalid[^\n]*\nTry 'kernelkit-fashion-mnist --help'\.\n$/);
  });

  it('--version prints the package version, --help the usage; both exit 0', () => {
    const version = (JSON.parse(readFileSync(join(APP_DIR, 'package.json'), 'utf8')) as { version: string }).version;
    const v = cli(['--version']);
    expect(v.status).toBe(0);
    expect(v.stdout.trim()).toBe(version);
    const h = cli(['--help']);
    expect(h.status).toBe(0);
    expect(h.stdout).toMatch(/^Usage: kernelkit-fashion-mnist /);
  });

  it('--json - prints only the JSON on stdout', () => {
    const r = cli(['--batch', '100', '--backend', 'cpu', '--json', '-']);
    expect(r.status, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { count: number }).count).toBe(100);
  }, 300_000);

  it('an unknown --variant is a usage error listing the backend\'s variants', () => {
    const r = cli(['--batch', '100', '--backend', 'cpu', '--variant', 'nope']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^kernelkit-fashion-mnist: --variant: the cpu backend has no convLayer variant "nope" \(it has: [\w-]+(, [\w-]+)*\)\nTry 'kernelkit-fashion-mnist --help'\.\n$/);
  });
});
