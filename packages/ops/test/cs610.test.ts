import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FileFormatError, InvalidArgumentError } from '@kernelkit/core';
import { CS610_DISP_PATH, CS610_GRID_PATH, cs610Problem, formatCs610Results, formatLf, parseCs610Disp, parseCs610Grid } from '../src/index.js';

const gridText = readFileSync(CS610_GRID_PATH, 'utf8');
const dispText = readFileSync(CS610_DISP_PATH, 'utf8');

describe('CS610 files', () => {
  it('parses the real grid.txt: 10 axes of 13 points from 0.5 step 0.5', () => {
    const dims = parseCs610Grid(gridText);
    expect(dims).toHaveLength(10);
    for (const g of dims) expect(g).toEqual({ lower: 0.5, upper: 7, step: 0.5 });
  });
  it('parses the real disp.txt: 10 constraints of 10 coefficients, d and ey', () => {
    const c = parseCs610Disp(dispText);
    expect(Array.from(c.coefficients.subarray(0, 10))).toEqual([2, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(c.targets[0]).toBe(16);
    expect(c.ey[0]).toBe(3.715);
    expect(c.ey[9]).toBe(3.533);
  });
  it('builds tolerances as kk·ey', () => {
    const p = cs610Problem(gridText, dispText, 0.3);
    expect(p.tolerances[0]).toBe(0.3 * 3.715);
  });
  it('rejects a grid file with too few numbers, naming file and line', () => {
    const short = gridText.split('\n').slice(0, 9).join('\n');
    expect(() => parseCs610Grid(short, 'g.txt')).toThrow(FileFormatError);
    expect(() => parseCs610Grid(short, 'g.txt')).toThrow(/g\.txt:9: expected 10 lines of numbers/);
  });
  it('rejects a non-number with its line', () => {
    const bad = gridText.replace(/0007\.000/, '7,0');
    expect(() => parseCs610Grid(bad, 'g.txt')).toThrow(/g\.txt:1:10: expected a number, got "7,0"/);
  });
  it('rejects step <= 0 and lower > upper', () => {
    expect(() => parseCs610Grid(gridText.replace(/0000\.500\n/, '0\n'), 'g.txt')).toThrow(/dimension 1: step must be > 0/);
    expect(() => parseCs610Grid(gridText.replace(/^0000\.500\t0007\.000/, '9\t7'), 'g.txt')).toThrow(/lower 9 > upper 7/);
  });
  it('rejects a disp file with a missing number', () => {
    expect(() => parseCs610Disp(dispText.replace(/\t3\.533\s*$/, ''), 'd.txt')).toThrow(/d\.txt:10:\d+: 11 number\(s\) on this line, expected 12/);
  });
  it('rejects a negative kk', () => {
    expect(() => cs610Problem(gridText, dispText, -1)).toThrow(InvalidArgumentError);
  });
});

describe('results file', () => {
  it('writes %lf fields separated by tabs, one point a line', () => {
    const text = formatCs610Results({ count: 2, dims: 3, points: new Float64Array([0.5, 1, 6.5, 2.25, 3.125, 1 / 3]) });
    expect(text).toBe('0.500000\t1.000000\t6.500000\n2.250000\t3.125000\t0.333333\n');
  });
  it('formats like C printf %lf at the edges', () => {
    expect(formatLf(-0)).toBe('-0.000000');
    expect(formatLf(-1e-9)).toBe('-0.000000');
    expect(formatLf(1e21)).toBe('1000000000000000000000.000000');
    // The exact binary values decide, as in printf: 5e-7 is just below half, 1.5e-6 just above.
    expect(formatLf(0.0000005)).toBe('0.000000');
    expect(formatLf(0.0000015)).toBe('0.000002');
    expect(formatCs610Results({ count: 0, dims: 10, points: new Float64Array(0) })).toBe('');
  });
});
