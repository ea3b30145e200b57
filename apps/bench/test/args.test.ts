import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseBenchArgs, UsageError } from '../src/args.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const bench = (args: readonly string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });

describe('argument errors', () => {
  it.each([
    [['--workload', 'huge'], '--workload'],
    [['--op', 'fft'], '--op'],
    [['--backend', 'cuda'], '--backend'],
    [['--threads', 'two'], '--threads'],
    [['--threads', '0'], '--threads'],
    [['--rounds', '0'], '--rounds'],
    [['--rounds', '3', '--in-process'], '--rounds'],
  ])('%j names the option', (args, name) => {
    expect(() => parseBenchArgs(args, false)).toThrow(UsageError);
    expect(() => parseBenchArgs(args, false)).toThrow(name);
  });

  it.each([
    [['--op', 'fft'], '--op'],
    [['--backend', 'cuda'], '--backend'],
    [['--case', 'nope', '--workload', 'tiny'], '--case'],
    [['--op', 'scan', '--case', 'conv2d-1x64-k5', '--workload', 'tiny'], '--case'],
    [['--json', '-', '--md', '-'], '--md'],
    [['--frobnicate'], '--frobnicate'],
  ])('the CLI exits 2 on %j, as `kernelkit-bench: <message>` + a --help hint', (args, name) => {
    const r = bench(args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^kernelkit-bench: [^\\n]*${name}[^\\n]*\\nTry 'kernelkit-bench --help'\\.\\n$`));
  });

  it('an unknown --variant exits 2, lists the valid ones and measures nothing', () => {
    const r = bench(['--workload', 'tiny', '--op', 'scan', '--backend', 'cpu', '--variant', 'nope', '--no-progress']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`kernelkit-bench: --variant: unknown variant nope for --op scan (cpu: wasm-simd, sequential)\nTry 'kernelkit-bench --help'.\n`);
  });

  it('a --variant that exists but matches no row of the selected op exits 2', () => {
    const r = bench(['--workload', 'tiny', '--op', 'scan', '--backend', 'cpu', '--variant', 'naive']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^kernelkit-bench: --variant: unknown variant naive for --op scan \(cpu: wasm-simd, sequential\)/);
  });

  it.each([['--version'], ['--help'], ['-h']])('%s exits 0', (flag) => {
    const r = bench([flag]);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
    if (flag === '--version') expect(r.stdout.trim()).toBe(version);
    else expect(r.stdout).toMatch(/^Usage: kernelkit-bench /);
  });

  it('parses lists and defaults', () => {
    const o = parseBenchArgs(['--op', 'scan,conv2d', '--backend', 'cpu', '--threads', '2'], false);
    expect(o).toMatchObject({ workload: 'small', ops: ['scan', 'conv2d'], backends: ['cpu'], threads: 2, progress: false });
  });
});
