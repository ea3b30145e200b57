/**
 * Malformed CS610 `grid.txt` / `disp.txt` files on disk: each must be rejected with a
 * FileFormatError that names the file, the line and (where there is one) the column, and they
 * must be the right ones; paths that are not small files are refused before they are read.
 */
import { mkdir, mkdtemp, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileFormatError } from '@kernelkit/core';
import { CS610_DISP_PATH, CS610_GRID_PATH, CS610_MAX_FILE_BYTES, readCs610Problem } from '../src/index.js';

const GRID_LINE = '0.5 7 0.5';
const DISP_LINE = '2 1 1 1 1 1 1 1 1 1 16 3.715';
/** `n` well-formed lines, with line `at` (1-based) replaced by `line` when given. */
function lines(good: string, n: number, at?: number, line?: string, eol = '\n'): string {
  const out = Array.from({ length: n }, () => good);
  if (at !== undefined && line !== undefined) out[at - 1] = line;
  return out.join(eol) + eol;
}
const grid = (at?: number, line?: string, eol?: string): string => lines(GRID_LINE, 10, at, line, eol);
const disp = (at?: number, line?: string): string => lines(DISP_LINE, 10, at, line);

interface Case {
  readonly name: string;
  readonly kind: 'grid' | 'disp';
  readonly text: string;
  readonly line: number;
  /** Where the parser points within the line; absent for "too few lines" (no one place is wrong). */
  readonly column?: number;
  readonly reason: RegExp;
}

const CASES: readonly Case[] = [
  // Too few lines: the line of the last row read (or line 1 of an empty file).
  { name: 'empty file', kind: 'grid', text: '', line: 1, reason: /expected 10 lines of numbers .*found 0: the file has no numbers/ },
  { name: 'blank lines only', kind: 'grid', text: '\n \n\t\n', line: 3, reason: /found 0: the file has no numbers/ },
  { name: 'nine of ten lines', kind: 'grid', text: lines(GRID_LINE, 9), line: 9, reason: /expected 10 lines of numbers \(one per dimension, 10 dimensions\), found 9: the last one is on this line/ },
  { name: 'trailing blank lines after too few', kind: 'grid', text: lines(GRID_LINE, 9) + '\n\n\n', line: 9, reason: /found 9/ },
  // A line with the wrong count: that line, not where the count runs out.
  { name: 'last line lacks its step', kind: 'grid', text: grid(10, '0.5 7'), line: 10, column: 6, reason: /2 number\(s\) on this line, expected 3 \(lower upper step\)/ },
  { name: 'an extra column on line 3', kind: 'grid', text: grid(3, '0.5 7 0.5 9'), line: 3, column: 11, reason: /more than 3 numbers on a line \(lower upper step\); the extra one is 9/ },
  // Too many lines: rejected (the C reader would ignore them), at the first extra number.
  { name: 'an eleventh line', kind: 'grid', text: grid() + '1 2 3\n', line: 11, column: 1, reason: /expected 10 lines of numbers .*found more: extra lines are rejected, not ignored/ },
  { name: 'one extra number on a line of its own', kind: 'grid', text: grid() + '\n\n  42\n', line: 13, column: 3, reason: /extra lines are rejected/ },
  // Not numbers.
  { name: 'a word', kind: 'grid', text: grid(5, '0.5 abc 0.5'), line: 5, column: 5, reason: /expected a number, got "abc"/ },
  { name: 'two decimal points', kind: 'grid', text: grid(2, '1.2.3 7 0.5'), line: 2, column: 1, reason: /got "1\.2\.3"/ },
  { name: 'hexadecimal', kind: 'grid', text: grid(7, '0x10 32 1'), line: 7, column: 1, reason: /got "0x10"/ },
  { name: 'a decimal comma', kind: 'grid', text: grid(1, '0,5 7 0,5'), line: 1, column: 1, reason: /got "0,5"/ },
  { name: 'a dangling exponent', kind: 'grid', text: grid(3, '1e 7 0.5'), line: 3, column: 1, reason: /got "1e"/ },
  { name: 'a lone sign', kind: 'grid', text: grid(4, '- 7 0.5'), line: 4, column: 1, reason: /got "-"/ },
  { name: 'a NUL byte', kind: 'grid', text: grid(6, '0.5 7\u0000 0.5'), line: 6, column: 5, reason: /got "7\\u0000"/ },
  { name: 'NaN', kind: 'grid', text: grid(8, 'NaN 7 0.5'), line: 8, column: 1, reason: /got "NaN"/ },
  { name: 'nan as printf writes it', kind: 'grid', text: grid(8, 'nan 7 0.5'), line: 8, column: 1, reason: /got "nan"/ },
  { name: 'Infinity', kind: 'grid', text: grid(9, '0.5 Infinity 0.5'), line: 9, column: 5, reason: /got "Infinity"/ },
  { name: '-inf as printf writes it', kind: 'grid', text: grid(10, '-inf 7 0.5'), line: 10, column: 1, reason: /got "-inf"/ },
  { name: 'a literal that overflows to Infinity', kind: 'grid', text: grid(2, '0.5 1e400 0.5'), line: 2, column: 5, reason: /1e400 is outside the range of a double/ },
  { name: 'a literal that overflows to -Infinity', kind: 'grid', text: grid(3, '-1e309 7 0.5'), line: 3, column: 1, reason: /-1e309 is outside the range of a double/ },
  // Values the grid cannot use, refused at their line rather than later as dims[j].
  { name: 'step 0', kind: 'grid', text: grid(3, '0.5 7 0'), line: 3, column: 7, reason: /dimension 3: step must be > 0, got 0/ },
  { name: 'negative step', kind: 'grid', text: grid(6, '0.5 7 -0.5'), line: 6, column: 7, reason: /dimension 6: step must be > 0, got -0\.5/ },
  { name: 'step -0', kind: 'grid', text: grid(1, '0.5 7 -0'), line: 1, column: 7, reason: /dimension 1: step must be > 0/ },
  { name: 'a step that underflows to 0', kind: 'grid', text: grid(8, '0.5 7 1e-400'), line: 8, column: 7, reason: /dimension 8: step must be > 0, got 0/ },
  { name: 'lower > upper', kind: 'grid', text: grid(4, '8 7 0.5'), line: 4, column: 1, reason: /dimension 4: lower 8 > upper 7/ },
  { name: 'a tiny step: too many points on one axis', kind: 'grid', text: grid(5, '0.5 7 1e-10'), line: 5, column: 7, reason: /dimension 5: step 1e-10 gives 65000000000 points on this axis.*GRID_AXIS_VALUES_LIMIT/ },
  { name: 'steps that together pass 2^53 points', kind: 'grid', text: lines('0 1 0.0001', 10), line: 4, column: 5, reason: /dimension 4: the grid has 10000000000000000 points with this axis, more than 2\^53/ },
  // Line ends: every kind counts lines the same.
  { name: 'CRLF line ends keep line numbers', kind: 'grid', text: grid(5, '0.5 x 0.5', '\r\n'), line: 5, column: 5, reason: /got "x"/ },
  { name: 'CR-only line ends keep line numbers', kind: 'grid', text: grid(7, '0.5 7 y', '\r'), line: 7, column: 7, reason: /got "y"/ },
  { name: 'CR-only: an extra column on line 3', kind: 'grid', text: grid(3, '0.5 7 0.5 1', '\r'), line: 3, column: 11, reason: /more than 3 numbers on a line/ },
  { name: 'mixed CR, LF and CRLF', kind: 'grid', text: `${GRID_LINE}\r${GRID_LINE}\n${GRID_LINE}\r\n\r\n${GRID_LINE}\rz`, line: 6, column: 1, reason: /got "z"/ },
  // disp.txt: 10 constraints, a line each of 10 coefficients, d, ey.
  { name: 'empty disp file', kind: 'disp', text: '', line: 1, reason: /expected 10 lines of numbers \(one per constraint, 10 constraints\), found 0: the file has no numbers/ },
  { name: 'disp missing its last ey', kind: 'disp', text: disp(10, DISP_LINE.replace(/ 3\.715$/, '')), line: 10, column: 23, reason: /11 number\(s\) on this line, expected 12 \(10 coefficients, d, ey\)/ },
  { name: 'disp with an eleventh constraint', kind: 'disp', text: disp() + DISP_LINE + '\n', line: 11, column: 1, reason: /extra lines are rejected/ },
  { name: 'disp with a word', kind: 'disp', text: disp(3, DISP_LINE.replace('16', 'sixteen')), line: 3, column: 21, reason: /got "sixteen"/ },
  { name: 'disp with NaN', kind: 'disp', text: disp(2, DISP_LINE.replace('3.715', 'NaN')), line: 2, column: 24, reason: /got "NaN"/ },
  { name: 'disp with an overflowing coefficient', kind: 'disp', text: disp(7, DISP_LINE.replace(/^2/, '2e999')), line: 7, column: 1, reason: /2e999 is outside the range of a double/ },
  { name: 'disp with a negative ey (a negative tolerance)', kind: 'disp', text: disp(4, DISP_LINE.replace('3.715', '-3.715')), line: 4, column: 24, reason: /constraint 4: ey must be >= 0 \(the tolerance is kk·ey\), got -3\.715/ },
];

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kk-cs610-'));
});
afterAll(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

async function rejection(p: Promise<unknown>): Promise<FileFormatError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof FileFormatError)) throw new Error(`expected a FileFormatError, got ${err === undefined ? 'success' : String(err)}`);
  return err;
}

describe('malformed CS610 files on disk', () => {
  it.each(CASES.map((c, i) => [c.name, c, i] as const))('%s', async (_name, c, i) => {
    const path = join(dir, `${i}-${c.kind}.txt`);
    await writeFile(path, c.text);
    // The other file is the shipped one, so the error can only come from the file under test.
    const p = c.kind === 'grid' ? readCs610Problem(path, CS610_DISP_PATH) : readCs610Problem(CS610_GRID_PATH, path);
    const e = await rejection(p);
    expect(e.file).toBe(path);
    expect(e.line).toBe(c.line);
    expect(e.column).toBe(c.column);
    const where = c.column === undefined ? `${c.line}` : `${c.line}:${c.column}`;
    expect(e.message.startsWith(`${path}:${where}: `), e.message).toBe(true);
    expect(e.message).toMatch(c.reason);
  });

  it('the well-formed files the table is built from parse (so each case fails for its own reason)', async () => {
    const g = join(dir, 'ok-grid.txt');
    const d = join(dir, 'ok-disp.txt');
    await writeFile(g, grid(undefined, undefined, '\r\n'));
    await writeFile(d, disp());
    const p = await readCs610Problem(g, d);
    expect(p.dims).toHaveLength(10);
    expect(p.dims[9]).toEqual({ lower: 0.5, upper: 7, step: 0.5 });
    expect(p.targets[9]).toBe(16);
    expect(p.tolerances[9]).toBeCloseTo(0.3 * 3.715, 12);
  });

  it('accepts the number spellings %lf accepts, other than nan/inf and hex', async () => {
    const g = join(dir, 'spellings.txt');
    await writeFile(g, grid(1, '+.5 7. 5e-1') + '   \n');
    const p = await readCs610Problem(g, CS610_DISP_PATH);
    expect(p.dims[0]).toEqual({ lower: 0.5, upper: 7, step: 0.5 });
  });
});

describe('paths that are not small CS610 files are refused before they are read', () => {
  const refused = async (grid: string, reason: RegExp, maxBytes?: number): Promise<void> => {
    const e = await rejection(readCs610Problem(grid, CS610_DISP_PATH, 0.3, maxBytes === undefined ? {} : { maxBytes }));
    expect(e.file).toBe(grid);
    expect(e.line).toBeUndefined();
    expect(e.message.startsWith(`${grid}: `), e.message).toBe(true);
    expect(e.message).toMatch(reason);
  };

  it('a folder', async () => {
    const folder = join(dir, 'a-folder');
    await mkdir(folder);
    await refused(folder, /is a folder, expected a CS610 grid file/);
  });

  it('/dev/zero (a device that never ends)', async () => {
    await refused('/dev/zero', /is a device or socket, not a file; expected a CS610 grid file/);
  });

  it('a 1 GB file, from its size (sparse: nothing is written)', async () => {
    const big = join(dir, 'big-grid.txt');
    await writeFile(big, grid());
    await truncate(big, 2 ** 30);
    await refused(big, new RegExp(`is 1073741824 bytes, more than the ${CS610_MAX_FILE_BYTES}-byte limit for a CS610 grid file`));
  });

  it('a file one byte over a smaller limit given as an option', async () => {
    const g = join(dir, 'limit-grid.txt');
    // Padded with blank lines past the shipped disp.txt's size, so only this file meets the limit.
    const text = grid() + '\n'.repeat((await stat(CS610_DISP_PATH)).size);
    await writeFile(g, text);
    await expect(readCs610Problem(g, CS610_DISP_PATH, 0.3, { maxBytes: text.length })).resolves.toMatchObject({ dims: expect.any(Array) });
    await refused(g, new RegExp(`is ${text.length} bytes, more than the ${text.length - 1}-byte limit`), text.length - 1);
  });

  it('the disp file is checked the same way and named', async () => {
    const e = await rejection(readCs610Problem(CS610_GRID_PATH, '/dev/zero'));
    expect(e.message).toBe('/dev/zero: is a device or socket, not a file; expected a CS610 disp file');
  });

  it('a CRLF split across read chunks counts as one line end', async () => {
    // 64 KiB chunks: pad line 1 with spaces so its CR is the last byte of the first chunk.
    const g = join(dir, 'split-crlf.txt');
    const first = GRID_LINE + ' '.repeat(64 * 1024 - GRID_LINE.length - 1) + '\r\n';
    await writeFile(g, first + lines(GRID_LINE, 9, 4, '0.5 q 0.5', '\r\n'));
    const e = await rejection(readCs610Problem(g, CS610_DISP_PATH));
    expect(e.line).toBe(5);
  });
});
