import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseBenchArgs, UsageError } from '../src/args.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

describe('argument errors', () => {
  it.each([
    [['--workload', 'huge'], '--workload'],
    [['--op', 'fft'], '--op'],
    [['--backend', 'cuda'], '--backend'],
    [['--threads', 'two'], '--threads'],
    [['--threads', '0'], '--threads'],
  ])('%j names the option', (args, name) => {
    expect(() => parseBenchArgs(args, false)).toThrow(UsageError);
    expect(() => parseBenchArgs(args, false)).toThrow(name);
  });

  it.each([
    [['--op', 'fft'], '--op'],
    [['--case', 'nope', '--workload', 'tiny'], '--case'],
    [['--frobnicate'], '--frobnicate'],
  ])('the CLI exits 2 on %j', (args, name) => {
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(name);
  });

  it('parses lists and defaults', () => {
    const o = parseBenchArgs(['--op', 'scan,conv2d', '--backend', 'cpu', '--threads', '2'], false);
    expect(o).toMatchObject({ workload: 'small', ops: ['scan', 'conv2d'], backends: ['cpu'], threads: 2, progress: false });
  });
});
