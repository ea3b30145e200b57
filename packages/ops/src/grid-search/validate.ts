import { assertFiniteNumber, assertInteger, describeValue, InvalidArgumentError, LimitExceededError } from '@kernelkit/core';
import { readArgs, readFiniteArray } from '../common/args.js';
import { gridAxisCount, gridAxisValues } from './shape.js';
import type { GridDim, GridSearchArgs, GridSearchProblem } from './types.js';

const MAX_DIMS = 32;

/**
 * Axis values all axes together may have (Σ points per axis): every backend holds the axes as
 * arrays of f64 (or f32) values, 512 MiB at this limit, so a larger grid is refused by name
 * instead of failing an allocation (or the process) part way.
 */
export const GRID_AXIS_VALUES_LIMIT = 2 ** 26;

/** Points one axis may have: all the axis values there are room for (see GRID_AXIS_VALUES_LIMIT). */
export const MAX_AXIS_POINTS = GRID_AXIS_VALUES_LIMIT;

/** Points a grid may have: point indices are exact integers in f64. */
export const MAX_GRID_POINTS = Number.MAX_SAFE_INTEGER;

const KEYS = ['dims', 'coefficients', 'targets', 'tolerances', 'maxPoints'] as const;

function readDim(value: unknown, j: number): GridDim {
  const g = readArgs(value, `dims[${j}]`, ['lower', 'upper', 'step'] as const);
  const { lower, upper, step } = g;
  assertFiniteNumber(lower, `dims[${j}].lower`);
  assertFiniteNumber(upper, `dims[${j}].upper`);
  assertFiniteNumber(step, `dims[${j}].step`);
  if (step <= 0) throw new InvalidArgumentError(`dims[${j}].step`, `must be > 0, got ${step}`);
  if (lower > upper) throw new InvalidArgumentError(`dims[${j}].lower`, `must be <= upper (${upper}), got ${lower}`);
  return { lower, upper, step };
}

/**
 * Each argument is read once and the problem keeps what was checked (see `readArgs`). Nothing
 * proportional to the grid is allocated here: the axis values are made on the first read of
 * `problem.axes`, which the backend kit reaches only after the abort check.
 */
export function validateGridSearch(args: GridSearchArgs): GridSearchProblem {
  const a = readArgs(args, 'args', KEYS);
  const dimsRaw = a.dims;
  if (!Array.isArray(dimsRaw)) throw new InvalidArgumentError('dims', `expected an array of {lower, upper, step}, got ${describeValue(dimsRaw)}`);
  const d = (dimsRaw as readonly unknown[]).length;
  if (d < 1 || d > MAX_DIMS) throw new InvalidArgumentError('dims', `expected 1 to ${MAX_DIMS} dimensions, got ${d}`);
  const dims: GridDim[] = [];
  const counts: number[] = [];
  let total = 1;
  for (let j = 0; j < d; j++) {
    const raw: unknown = (dimsRaw as readonly unknown[])[j];
    if (raw === undefined && !Object.hasOwn(dimsRaw, j)) throw new InvalidArgumentError(`dims[${j}]`, 'missing (a hole in a sparse array); expected {lower, upper, step}');
    const g = readDim(raw, j);
    const n = gridAxisCount(g);
    if (n > 2 ** 31) throw new InvalidArgumentError(`dims[${j}]`, `${n} points on one axis is more than 2^31`);
    dims.push(g);
    counts.push(n);
    total *= n;
  }
  if (total > MAX_GRID_POINTS) throw new InvalidArgumentError('dims', `the grid has ${total} points, more than 2^53`);
  let values = 0;
  counts.forEach((n, j) => {
    values += n;
    if (values > GRID_AXIS_VALUES_LIMIT) {
      throw new LimitExceededError(`dims[${j}]`, `the axes up to this one have ${values} points together, more than the ${GRID_AXIS_VALUES_LIMIT} axis values a backend holds (GRID_AXIS_VALUES_LIMIT)`);
    }
  });
  const targets = readFiniteArray(a.targets, 'targets', undefined);
  const m = targets.length;
  const coefficients = readFiniteArray(a.coefficients, 'coefficients', m * d);
  const tolerances = readFiniteArray(a.tolerances, 'tolerances', m);
  tolerances.forEach((e, i) => {
    if (e < 0) throw new InvalidArgumentError(`tolerances[${i}]`, `must be >= 0, got ${e}`);
  });
  const maxPoints = a.maxPoints ?? 10_000_000;
  assertInteger(maxPoints, 'maxPoints', 0, 2 ** 31);
  let axes: readonly Float64Array[] | undefined;
  return {
    dims,
    d,
    m,
    counts,
    total,
    get axes(): readonly Float64Array[] {
      axes ??= dims.map(gridAxisValues);
      return axes;
    },
    coefficients,
    targets,
    tolerances,
    maxPoints,
  };
}
