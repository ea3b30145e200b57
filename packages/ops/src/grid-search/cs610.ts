import { FileFormatError, InvalidArgumentError, assertFiniteNumber, assertInteger } from '@kernelkit/core';
import { readFileChunks } from '../bounded-read.js';
import { gridAxisCount } from './shape.js';
import type { GridDim, GridPoints, GridSearchArgs } from './types.js';
import { GRID_AXIS_VALUES_LIMIT, MAX_GRID_POINTS } from './validate.js';

/** The CS610 files are a few hundred bytes; anything this large is the wrong file. */
export const CS610_MAX_FILE_BYTES = 1024 * 1024;

/** Splits text arriving in chunks into lines; CR, LF and CRLF each end one line. */
class LineSplitter {
  private pending = '';
  /** Lines ended so far. */
  count = 0;

  push(text: string, emit: (line: string, lineNumber: number) => void): void {
    this.pending += text;
    const lineEnd = /[\r\n]/g;
    let from = 0;
    for (;;) {
      lineEnd.lastIndex = from;
      const at = lineEnd.exec(this.pending)?.index;
      if (at === undefined) break;
      // A CR at the end of the text so far may be the first half of a CRLF split across chunks.
      if (this.pending[at] === '\r' && at + 1 === this.pending.length) break;
      emit(this.pending.slice(from, at), ++this.count);
      from = at + (this.pending[at] === '\r' && this.pending[at + 1] === '\n' ? 2 : 1);
    }
    this.pending = this.pending.slice(from);
  }

  /** Emits the last line (one without a line end, or a held-back CR's line); returns the line count. */
  end(emit: (line: string, lineNumber: number) => void): number {
    if (this.pending.endsWith('\r')) {
      emit(this.pending.slice(0, -1), ++this.count);
    } else if (this.pending !== '') {
      emit(this.pending, ++this.count);
    }
    this.pending = '';
    return this.count;
  }
}

/** A number in the file and where it is (1-based line and column). */
interface Cell {
  readonly value: number;
  readonly line: number;
  readonly column: number;
}

/** Decimal floats as `%lf` reads them, minus nan/inf and hexadecimal, which a data file should not hold. */
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A file of rows of `perRow` numbers, one row a line (blank lines skipped), exactly `rows` rows.
 * Each line is checked as it arrives and the first problem stops the parse, named by file, line
 * and column; `onRow` checks a row's values the same way.
 */
class RowParser {
  private done = 0;
  private lastRowLine = 0;

  constructor(
    private readonly file: string,
    private readonly rows: number,
    private readonly perRow: number,
    /** What a row holds, e.g. "lower upper step"; and what the rows are, e.g. "dimensions". */
    private readonly rowWhat: string,
    private readonly rowsWhat: string,
    private readonly onRow: (cells: readonly Cell[], row: number) => void,
  ) {}

  fail(reason: string, line: number, column?: number): never {
    throw new FileFormatError(this.file, reason, line, column === undefined ? undefined : { column });
  }

  line = (text: string, line: number): void => {
    const cells: Cell[] = [];
    for (const m of text.matchAll(/\S+/g)) {
      const tok = m[0];
      const column = m.index + 1;
      if (this.done === this.rows) {
        this.fail(`expected ${this.rows} lines of numbers (${this.rowsWhat}), found more: extra lines are rejected, not ignored`, line, column);
      }
      if (!NUMBER.test(tok)) this.fail(`expected a number, got ${JSON.stringify(tok)}`, line, column);
      const value = Number(tok);
      // 1e400 passes the pattern but parses to Infinity, which no bound or coefficient may be.
      if (!Number.isFinite(value)) this.fail(`${tok} is outside the range of a double`, line, column);
      if (cells.length === this.perRow) this.fail(`more than ${this.perRow} numbers on a line (${this.rowWhat}); the extra one is ${tok}`, line, column);
      cells.push({ value, line, column });
    }
    if (cells.length === 0) return;
    if (cells.length < this.perRow) {
      this.fail(`${cells.length} number(s) on this line, expected ${this.perRow} (${this.rowWhat})`, line, text.trimEnd().length + 1);
    }
    this.onRow(cells, this.done);
    this.done++;
    this.lastRowLine = line;
  };

  end(lines: number): void {
    if (this.done === this.rows) return;
    const where = this.done === 0 ? 'the file has no numbers' : 'the last one is on this line';
    this.fail(`expected ${this.rows} lines of numbers (${this.rowsWhat}), found ${this.done}: ${where}`, this.done === 0 ? Math.max(1, lines) : this.lastRowLine);
  }
}

function parseText(text: string, parser: RowParser): void {
  const lines = new LineSplitter();
  lines.push(text, parser.line);
  parser.end(lines.end(parser.line));
}

async function parseFile(path: string, parser: RowParser, maxBytes: number, what: string): Promise<void> {
  const lines = new LineSplitter();
  const decoder = new TextDecoder();
  for await (const chunk of readFileChunks(path, maxBytes, what)) lines.push(decoder.decode(chunk, { stream: true }), parser.line);
  lines.push(decoder.decode(), parser.line);
  parser.end(lines.end(parser.line));
}

/** Collects the dimensions of `grid.txt`, checking each at its line: a usable step and a grid the search can hold. */
function gridParser(file: string, dims: number): { parser: RowParser; result: GridDim[] } {
  const result: GridDim[] = [];
  let total = 1;
  let values = 0;
  const parser = new RowParser(file, dims, 3, 'lower upper step', `one per dimension, ${dims} dimensions`, (cells, j) => {
    const [lo, up, st] = cells as [Cell, Cell, Cell];
    const dim = `dimension ${j + 1}`;
    if (!(st.value > 0)) parser.fail(`${dim}: step must be > 0, got ${st.value}`, st.line, st.column);
    if (lo.value > up.value) parser.fail(`${dim}: lower ${lo.value} > upper ${up.value}`, lo.line, lo.column);
    const g = { lower: lo.value, upper: up.value, step: st.value };
    const n = gridAxisCount(g);
    // The limits validateGridSearch applies, checked here so the error names the line.
    values += n;
    if (values > GRID_AXIS_VALUES_LIMIT) {
      parser.fail(`${dim}: step ${st.value} gives ${n} points on this axis, ${values} on the axes so far, more than the ${GRID_AXIS_VALUES_LIMIT} axis values a backend holds (GRID_AXIS_VALUES_LIMIT)`, st.line, st.column);
    }
    total *= n;
    if (total > MAX_GRID_POINTS) parser.fail(`${dim}: the grid has ${total} points with this axis, more than 2^53`, st.line, st.column);
    result.push(g);
  });
  return { parser, result };
}

export interface Cs610Constraints {
  readonly coefficients: Float64Array;
  readonly targets: Float64Array;
  /** The seed's `ey`; tolerances are `kk·ey`. */
  readonly ey: Float64Array;
}

/** Collects the constraints of `disp.txt`: per line D coefficients, d, then ey (a tolerance scale, so >= 0). */
function dispParser(file: string, dims: number, constraints: number): { parser: RowParser; result: Cs610Constraints } {
  const result = { coefficients: new Float64Array(constraints * dims), targets: new Float64Array(constraints), ey: new Float64Array(constraints) };
  const parser = new RowParser(file, constraints, dims + 2, `${dims} coefficients, d, ey`, `one per constraint, ${constraints} constraints`, (cells, i) => {
    const ey = cells[dims + 1]!;
    if (ey.value < 0) parser.fail(`constraint ${i + 1}: ey must be >= 0 (the tolerance is kk·ey), got ${ey.value}`, ey.line, ey.column);
    for (let j = 0; j < dims; j++) result.coefficients[i * dims + j] = cells[j]!.value;
    result.targets[i] = cells[dims]!.value;
    result.ey[i] = ey.value;
  });
  return { parser, result };
}

function checkShape(dims: number, constraints?: number): void {
  assertInteger(dims, 'dims', 1, 32);
  if (constraints !== undefined) assertInteger(constraints, 'constraints', 1, 1024);
}

/** `grid.txt`: per dimension a line `lower upper step` (CS610: 10 lines, blank lines allowed). */
export function parseCs610Grid(text: string, file = 'grid.txt', dims = 10): GridDim[] {
  checkShape(dims);
  const { parser, result } = gridParser(file, dims);
  parseText(text, parser);
  return result;
}

/** `disp.txt`: per constraint a line of D coefficients, then d, then ey (CS610: 10 lines of 12 numbers). */
export function parseCs610Disp(text: string, file = 'disp.txt', dims = 10, constraints = 10): Cs610Constraints {
  checkShape(dims, constraints);
  const { parser, result } = dispParser(file, dims, constraints);
  parseText(text, parser);
  return result;
}

function checkKk(kk: number): void {
  assertFiniteNumber(kk, 'kk');
  if (kk < 0) throw new InvalidArgumentError('kk', `must be >= 0, got ${kk}`);
}

const problem = (dims: GridDim[], { coefficients, targets, ey }: Cs610Constraints, kk: number): GridSearchArgs => ({ dims, coefficients, targets, tolerances: ey.map((v) => kk * v) });

/** The CS610 problem from the two files' contents: tolerances are `kk·ey`, kk = 0.3 in the seed. */
export function cs610Problem(gridText: string, dispText: string, kk = 0.3, files: { grid?: string; disp?: string } = {}): GridSearchArgs {
  checkKk(kk);
  return problem(parseCs610Grid(gridText, files.grid), parseCs610Disp(dispText, files.disp), kk);
}

export interface ReadCs610Options {
  /** Refuse a file longer than this (default CS610_MAX_FILE_BYTES). */
  readonly maxBytes?: number;
}

/**
 * The CS610 problem from the two files on disk, each read with a byte limit and parsed line by
 * line as it arrives, stopping at the first problem (FileFormatError with file, line and column).
 */
export async function readCs610Problem(gridPath: string, dispPath: string, kk = 0.3, options: ReadCs610Options = {}): Promise<GridSearchArgs> {
  checkKk(kk);
  const maxBytes = options.maxBytes ?? CS610_MAX_FILE_BYTES;
  assertInteger(maxBytes, 'options.maxBytes', 1, 2 ** 31);
  const grid = gridParser(gridPath, 10);
  await parseFile(gridPath, grid.parser, maxBytes, 'a CS610 grid file');
  const disp = dispParser(dispPath, 10, 10);
  await parseFile(dispPath, disp.parser, maxBytes, 'a CS610 disp file');
  return problem(grid.result, disp.result, kk);
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
