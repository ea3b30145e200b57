import { readFile } from 'node:fs/promises';
import { FileFormatError, InvalidArgumentError, assertFiniteNumber } from '@kernelkit/core';
import type { GridDim, GridPoints, GridSearchArgs } from './types.js';

interface NumberToken {
  readonly value: number;
  readonly line: number;
}

interface Tokens {
  readonly numbers: NumberToken[];
  /** Lines in the file (a trailing newline does not start another), so an empty file still has a line to name. */
  readonly lines: number;
}

/** Whitespace-separated numbers, as the seed's `fscanf("%lf")` reads them, with line numbers. */
function tokenize(text: string, file: string): Tokens {
  const numbers: NumberToken[] = [];
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines.at(-1) === '') lines.pop();
  lines.forEach((lineText, i) => {
    for (const tok of lineText.trim().split(/\s+/)) {
      if (tok === '') continue;
      // Number('') and Number('0x10') are too lenient for a data file: accept decimal floats only.
      if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(tok)) {
        throw new FileFormatError(file, `expected a number, got ${JSON.stringify(tok)}`, i + 1);
      }
      const value = Number(tok);
      // 1e400 passes the pattern but parses to Infinity, which no bound or coefficient may be.
      if (!Number.isFinite(value)) throw new FileFormatError(file, `${tok} is outside the range of a double`, i + 1);
      numbers.push({ value, line: i + 1 });
    }
  });
  return { numbers, lines: lines.length };
}

/**
 * Exactly `expected` numbers. The seed's fscanf loop would silently ignore numbers after the last
 * one it reads; a longer file is more likely the wrong file, so it is rejected at the first extra one.
 */
function checkCount({ numbers, lines }: Tokens, expected: number, what: string, file: string): void {
  const found = numbers.length;
  if (found === expected) return;
  if (found > expected) {
    const extra = numbers[expected]!;
    throw new FileFormatError(file, `expected ${expected} numbers (${what}), found ${found}: extra numbers are rejected, not ignored; the first extra one (${extra.value}) is on this line`, extra.line);
  }
  const last = numbers.at(-1);
  const where = last === undefined ? 'the file has no numbers' : 'the last one is on this line';
  throw new FileFormatError(file, `expected ${expected} numbers (${what}), found ${found}: ${where}`, last?.line ?? lines);
}

/** `grid.txt`: per dimension `lower upper step` (CS610: 10 lines, 30 numbers). */
export function parseCs610Grid(text: string, file = 'grid.txt', dims = 10): GridDim[] {
  const tokens = tokenize(text, file);
  checkCount(tokens, dims * 3, `lower, upper, step for ${dims} dimensions`, file);
  const t = tokens.numbers;
  const out: GridDim[] = [];
  for (let j = 0; j < dims; j++) {
    const [lo, up, st] = [t[3 * j]!, t[3 * j + 1]!, t[3 * j + 2]!];
    if (!(st.value > 0)) throw new FileFormatError(file, `dimension ${j + 1}: step must be > 0, got ${st.value}`, st.line);
    if (lo.value > up.value) throw new FileFormatError(file, `dimension ${j + 1}: lower ${lo.value} > upper ${up.value}`, lo.line);
    out.push({ lower: lo.value, upper: up.value, step: st.value });
  }
  return out;
}

export interface Cs610Constraints {
  readonly coefficients: Float64Array;
  readonly targets: Float64Array;
  /** The seed's `ey`; tolerances are `kk·ey`. */
  readonly ey: Float64Array;
}

/** `disp.txt`: per constraint D coefficients, then d, then ey (CS610: 10 × 12 = 120 numbers). */
export function parseCs610Disp(text: string, file = 'disp.txt', dims = 10, constraints = 10): Cs610Constraints {
  const tokens = tokenize(text, file);
  const per = dims + 2;
  checkCount(tokens, per * constraints, `${constraints} constraints × ${dims} coefficients, d, ey`, file);
  const t = tokens.numbers;
  const coefficients = new Float64Array(constraints * dims);
  const targets = new Float64Array(constraints);
  const ey = new Float64Array(constraints);
  for (let i = 0; i < constraints; i++) {
    for (let j = 0; j < dims; j++) coefficients[i * dims + j] = t[i * per + j]!.value;
    targets[i] = t[i * per + dims]!.value;
    ey[i] = t[i * per + dims + 1]!.value;
  }
  return { coefficients, targets, ey };
}

/** The CS610 problem from the two files' contents: tolerances are `kk·ey`, kk = 0.3 in the seed. */
export function cs610Problem(gridText: string, dispText: string, kk = 0.3, files: { grid?: string; disp?: string } = {}): GridSearchArgs {
  assertFiniteNumber(kk, 'kk');
  if (kk < 0) throw new InvalidArgumentError('kk', `must be >= 0, got ${kk}`);
  const dims = parseCs610Grid(gridText, files.grid);
  const { coefficients, targets, ey } = parseCs610Disp(dispText, files.disp);
  return { dims, coefficients, targets, tolerances: ey.map((v) => kk * v) };
}

export async function readCs610Problem(gridPath: string, dispPath: string, kk = 0.3): Promise<GridSearchArgs> {
  const [g, d] = await Promise.all([readFile(gridPath, 'utf8'), readFile(dispPath, 'utf8')]);
  return cs610Problem(g, d, kk, { grid: gridPath, disp: dispPath });
}

/** `%lf` (six decimals, C rounding of the exact binary value). */
export function formatLf(v: number): string {
  if (!Number.isFinite(v)) return Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf';
  if (Object.is(v, -0)) return '-0.000000';
  // toFixed switches to exponent notation at 1e21; printf never does.
  if (Math.abs(v) >= 1e21) return BigInt(Math.trunc(v)).toString() + '.000000';
  return v.toFixed(6);
}

/** The seed's results file: one point a line, `%lf` fields separated by tabs. */
export function formatCs610Results(r: GridPoints): string {
  const lines: string[] = new Array<string>(r.count);
  for (let i = 0; i < r.count; i++) {
    const f: string[] = new Array<string>(r.dims);
    for (let j = 0; j < r.dims; j++) f[j] = formatLf(r.points[i * r.dims + j]!);
    lines[i] = f.join('\t');
  }
  return r.count === 0 ? '' : lines.join('\n') + '\n';
}
