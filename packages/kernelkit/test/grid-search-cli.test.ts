/**
 * `kernelkit grid-search` with hostile paths: outputs are checked before any work (an input named
 * as the output, a missing folder, a folder, a read-only file), inputs that are not small CS610
 * files are refused by name, and every error is one line naming the path, exit 2 for a bad
 * command line and 1 for a bad file. Runs the built CLI (build first).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const env = { ...process.env, KERNELKIT_BACKEND: '', KERNELKIT_ADAPTER: '' };
const GRID_LINE = '0.5 7 0.5';
const DISP_LINE = '2 1 1 1 1 1 1 1 1 1 16 3.715';
const grid10 = (eol = '\n'): string => Array.from({ length: 10 }, () => GRID_LINE).join(eol) + eol;
/** One point per axis (floor((1 − 0.5) / 0.5) = 1): a search that ends at once. */
const ONE_POINT_GRID = Array.from({ length: 10 }, () => '0.5 1 0.5').join('\n') + '\n';
const DISP = Array.from({ length: 10 }, () => DISP_LINE).join('\n') + '\n';

// Readable by an unprivileged user too (the read-only test runs the CLI as one when this is root):
// under the repo's git-ignored tmp/ where the system's temporary folder is closed to others.
const base = (statSync(tmpdir()).mode & 0o001) !== 0 ? tmpdir() : fileURLToPath(new URL('../../../tmp/', import.meta.url));
mkdirSync(base, { recursive: true });
const dir = mkdtempSync(join(base, 'kk-grid-cli-'));
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function run(args: readonly string[], extra: { uid?: number; gid?: number } = {}) {
  const r = spawnSync(process.execPath, [CLI, 'grid-search', '--backend', 'cpu', '--no-progress', ...args], { encoding: 'utf8', timeout: 60_000, env, cwd: dir, ...extra });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** One line of error (plus the --help hint for usage errors), no stack trace, no raw RangeError. */
function expectOneLine(stderr: string, text: string): void {
  const lines = stderr.trimEnd().split('\n');
  expect(lines[0]).toBe(`kernelkit: ${text}`);
  expect(lines.slice(1).every((l) => l.startsWith('Try '))).toBe(true);
  expect(stderr).not.toMatch(/^\s+at |RangeError/m);
}

describe('outputs are checked before the work', () => {
  // A malformed grid proves the order: were it read first, its error would come instead.
  const badGrid = file('bad-grid.txt', 'not a grid\n');

  it('--out naming the --grid file: refused, the input untouched', () => {
    const g = file('same.txt', grid10());
    const r = run(['--grid', g, '--out', g]);
    expect(r.code).toBe(2);
    expectOneLine(r.stderr, `--out: ${g} is the same file as --grid ${g}, an input: refusing to overwrite it`);
    expect(readFileSync(g, 'utf8')).toBe(grid10());
  });

  it('--out naming the --disp file through a link and a relative path', () => {
    const d = file('disp-for-link.txt', DISP);
    symlinkSync(d, join(dir, 'link-to-disp.txt'));
    const r = run(['--disp', d, '--out', './link-to-disp.txt']);
    expect(r.code).toBe(2);
    expectOneLine(r.stderr, `--out: ./link-to-disp.txt is the same file as --disp ${d}, an input: refusing to overwrite it`);
    expect(readFileSync(d, 'utf8')).toBe(DISP);
  });

  it('--out in a folder that does not exist', () => {
    const out = join(dir, 'no-such-folder', 'r.txt');
    const r = run(['--grid', badGrid, '--out', out]);
    expect(r.code).toBe(2);
    expectOneLine(r.stderr, `--out: cannot create ${out}: the folder ${join(dir, 'no-such-folder')} does not exist`);
  });

  it('--out naming a folder', () => {
    const r = run(['--grid', badGrid, '--out', dir]);
    expect(r.code).toBe(2);
    expectOneLine(r.stderr, `--out: ${dir} is a folder; expected a file to write`);
  });

  it('--out naming a read-only file', () => {
    const out = file('read-only.txt', 'keep me\n');
    chmodSync(out, 0o444);
    // root may write any file, so the CLI runs as an unprivileged user there.
    const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const r = run(['--grid', badGrid, '--out', out], asUser);
    expect(r.code).toBe(2);
    expectOneLine(r.stderr, `--out: ${out} is not writable (EACCES)`);
    expect(readFileSync(out, 'utf8')).toBe('keep me\n');
  });

  it('--json naming the same file as --out', () => {
    const out = join(dir, 'both.txt');
    const r = run(['--grid', badGrid, '--out', out, '--json', out]);
    expect(r.code).toBe(2);
    expectOneLine(r.stderr, `--json: ${out} is the same file as --out ${out}, another output`);
  });

  it('--json naming the --grid file', () => {
    const g = file('grid-as-json.txt', grid10());
    const r = run(['--grid', g, '--out', join(dir, 'r.txt'), '--json', g]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--json: ${g} is the same file as --grid ${g}`);
    expect(readFileSync(g, 'utf8')).toBe(grid10());
  });

  it('--out - writes the results to stdout and the summary to stderr', () => {
    const g = file('one-point.txt', ONE_POINT_GRID);
    const d = file('loose-disp.txt', Array.from({ length: 10 }, () => '1 1 1 1 1 1 1 1 1 1 5 100').join('\n') + '\n');
    const r = run(['--grid', g, '--disp', d, '--out', '-']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(Array.from({ length: 10 }, () => '0.500000').join('\t') + '\n');
    expect(r.stderr).toMatch(/^1 points in .* results in stdout/);
  });
});

describe('inputs that are not small CS610 files: one line with the file name, exit 1', () => {
  it.each([
    ['a folder', () => dir, `${dir}: is a folder, expected a CS610 grid file`],
    ['/dev/zero', () => '/dev/zero', '/dev/zero: is a device or socket, not a file; expected a CS610 grid file'],
    [
      'a 1 GB file (sparse)',
      () => {
        const big = file('big.txt', grid10());
        truncateSync(big, 2 ** 30);
        return big;
      },
      `${join(dir, 'big.txt')}: is 1073741824 bytes, more than the 1048576-byte limit for a CS610 grid file`,
    ],
  ])('%s', (_name, path, message) => {
    const r = run(['--grid', path(), '--out', join(dir, 'r.txt')]);
    expect(r.code).toBe(1);
    expectOneLine(r.stderr, message);
  });

  it('CR-only line ends: the error is on its own line and column', () => {
    const g = file('cr.txt', grid10('\r').replace(/^((?:[^\r]*\r){6})0\.5 7 0\.5/, '$10.5 7 0.5 8'));
    const r = run(['--grid', g, '--out', join(dir, 'r.txt')]);
    expect(r.code).toBe(1);
    expectOneLine(r.stderr, `${g}:7:11: more than 3 numbers on a line (lower upper step); the extra one is 8`);
  });

  it('a negative ey (a negative tolerance) is named at its line in disp.txt, not as tolerances[i]', () => {
    const d = file('neg-ey.txt', DISP.replace(/3\.715\n$/, '-1\n'));
    const r = run(['--disp', d, '--out', join(dir, 'r.txt')]);
    expect(r.code).toBe(1);
    expectOneLine(r.stderr, `${d}:10:24: constraint 10: ey must be >= 0 (the tolerance is kk·ey), got -1`);
  });

  it('a tiny step is named at its line in grid.txt, not as dims[j]', () => {
    const g = file('tiny-step.txt', grid10().replace(/0\.5\n$/, '1e-10\n'));
    const r = run(['--grid', g, '--out', join(dir, 'r.txt')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^kernelkit: ${g}:10:7: dimension 10: step 1e-10 gives 65000000000 points on this axis`));
  });
});

describe('numbers on the command line are decimal', () => {
  it.each(['0x10', '0b1', 'Infinity', '1e', ''])('--kk %j is a usage error', (kk) => {
    mkdirSync(join(dir, 'kk'), { recursive: true });
    const r = run(['--kk', kk, '--out', join(dir, 'kk', 'r.txt')]);
    expect(r.code).toBe(2);
    expectOneLine(r.stderr, `--kk: expected a decimal number, got ${JSON.stringify(kk)}`);
  });
});
