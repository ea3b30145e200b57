/**
 * Malformed CS610 `grid.txt` / `disp.txt` files on disk: each must be rejected with a
 * FileFormatError that names the file and the line, and the line must be the right one.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileFormatError } from '@kernelkit/core';
import { CS610_DISP_PATH, CS610_GRID_PATH, readCs610Problem } from '../src/index.js';

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
  readonly reason: RegExp;
}

const CASES: readonly Case[] = [
  // Too few numbers: the line of the last number read (or line 1 of an empty file).
  { name: 'empty file', kind: 'grid', text: '', line: 1, reason: /expected 30 numbers .*found 0: the file has no numbers/ },
  { name: 'blank lines only', kind: 'grid', text: '\n \n\t\n', line: 3, reason: /found 0: the file has no numbers/ },
  { name: 'nine of ten lines', kind: 'grid', text: lines(GRID_LINE, 9), line: 9, reason: /expected 30 numbers .*found 27: the last one is on this line/ },
  { name: 'last line lacks its step', kind: 'grid', text: grid(10, '0.5 7'), line: 10, reason: /found 29/ },
  { name: 'trailing blank lines after too few', kind: 'grid', text: lines(GRID_LINE, 9) + '\n\n\n', line: 9, reason: /found 27/ },
  // Too many: rejected (the C reader would ignore them), at the first extra number.
  { name: 'an eleventh line', kind: 'grid', text: grid() + '1 2 3\n', line: 11, reason: /found 33: extra numbers are rejected, not ignored; the first extra one \(1\)/ },
  { name: 'one extra number on a line of its own', kind: 'grid', text: grid() + '\n\n42\n', line: 13, reason: /found 31: .*first extra one \(42\)/ },
  // Not numbers.
  { name: 'a word', kind: 'grid', text: grid(5, '0.5 abc 0.5'), line: 5, reason: /expected a number, got "abc"/ },
  { name: 'two decimal points', kind: 'grid', text: grid(2, '1.2.3 7 0.5'), line: 2, reason: /got "1\.2\.3"/ },
  { name: 'hexadecimal', kind: 'grid', text: grid(7, '0x10 32 1'), line: 7, reason: /got "0x10"/ },
  { name: 'a decimal comma', kind: 'grid', text: grid(1, '0,5 7 0,5'), line: 1, reason: /got "0,5"/ },
  { name: 'a dangling exponent', kind: 'grid', text: grid(3, '1e 7 0.5'), line: 3, reason: /got "1e"/ },
  { name: 'a lone sign', kind: 'grid', text: grid(4, '- 7 0.5'), line: 4, reason: /got "-"/ },
  { name: 'a NUL byte', kind: 'grid', text: grid(6, '0.5 7\u0000 0.5'), line: 6, reason: /got "7\\u0000"/ },
  { name: 'NaN', kind: 'grid', text: grid(8, 'NaN 7 0.5'), line: 8, reason: /got "NaN"/ },
  { name: 'nan as printf writes it', kind: 'grid', text: grid(8, 'nan 7 0.5'), line: 8, reason: /got "nan"/ },
  { name: 'Infinity', kind: 'grid', text: grid(9, '0.5 Infinity 0.5'), line: 9, reason: /got "Infinity"/ },
  { name: '-inf as printf writes it', kind: 'grid', text: grid(10, '-inf 7 0.5'), line: 10, reason: /got "-inf"/ },
  { name: 'a literal that overflows to Infinity', kind: 'grid', text: grid(2, '0.5 1e400 0.5'), line: 2, reason: /1e400 is outside the range of a double/ },
  { name: 'a literal that overflows to -Infinity', kind: 'grid', text: grid(3, '-1e309 7 0.5'), line: 3, reason: /-1e309 is outside the range of a double/ },
  // Values the grid cannot use.
  { name: 'step 0', kind: 'grid', text: grid(3, '0.5 7 0'), line: 3, reason: /dimension 3: step must be > 0, got 0/ },
  { name: 'negative step', kind: 'grid', text: grid(6, '0.5 7 -0.5'), line: 6, reason: /dimension 6: step must be > 0, got -0\.5/ },
  { name: 'step -0', kind: 'grid', text: grid(1, '0.5 7 -0'), line: 1, reason: /dimension 1: step must be > 0/ },
  { name: 'a step that underflows to 0', kind: 'grid', text: grid(8, '0.5 7 1e-400'), line: 8, reason: /dimension 8: step must be > 0, got 0/ },
  { name: 'lower > upper', kind: 'grid', text: grid(4, '8 7 0.5'), line: 4, reason: /dimension 4: lower 8 > upper 7/ },
  { name: 'CRLF line ends keep line numbers', kind: 'grid', text: grid(5, '0.5 x 0.5', '\r\n'), line: 5, reason: /got "x"/ },
  // disp.txt: 10 constraints × (10 coefficients, d, ey).
  { name: 'empty disp file', kind: 'disp', text: '', line: 1, reason: /expected 120 numbers .*found 0: the file has no numbers/ },
  { name: 'disp missing its last ey', kind: 'disp', text: disp(10, DISP_LINE.replace(/ 3\.715$/, '')), line: 10, reason: /expected 120 numbers .*found 119/ },
  { name: 'disp with an eleventh constraint', kind: 'disp', text: disp() + DISP_LINE + '\n', line: 11, reason: /found 132: extra numbers are rejected/ },
  { name: 'disp with a word', kind: 'disp', text: disp(3, DISP_LINE.replace('16', 'sixteen')), line: 3, reason: /got "sixteen"/ },
  { name: 'disp with NaN', kind: 'disp', text: disp(2, DISP_LINE.replace('3.715', 'NaN')), line: 2, reason: /got "NaN"/ },
  { name: 'disp with an overflowing coefficient', kind: 'disp', text: disp(7, DISP_LINE.replace(/^2/, '2e999')), line: 7, reason: /2e999 is outside the range of a double/ },
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
    expect(e.message.startsWith(`${path}:${c.line}: `), e.message).toBe(true);
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
