import { assertFiniteNumber, assertInteger, assertObject, describeValue, InvalidArgumentError, isDetachedBuffer } from '@kernelkit/core';
import { gridAxisCount, gridAxisValues } from './shape.js';
import type { GridDim, GridSearchArgs, GridSearchProblem } from './types.js';

const MAX_DIMS = 32;

function toF64(value: unknown, name: string, length: number): Float64Array {
  let out: Float64Array;
  if (value instanceof Float64Array) {
    if (isDetachedBuffer(value.buffer)) throw new InvalidArgumentError(name, 'its ArrayBuffer is detached (was it transferred?)');
    out = value;
  }
  else if (Array.isArray(value)) out = Float64Array.from(value as number[]);
  else throw new InvalidArgumentError(name, `expected a Float64Array or an array of numbers, got ${describeValue(value)}`);
  if (out.length !== length) throw new InvalidArgumentError(name, `expected length ${length}, got ${out.length}`);
  for (let i = 0; i < out.length; i++) {
    if (!Number.isFinite(out[i])) throw new InvalidArgumentError(`${name}[${i}]`, `expected a finite number, got ${describeValue((value as ArrayLike<unknown>)[i])}`);
  }
  return out;
}

export function validateGridSearch(args: GridSearchArgs): GridSearchProblem {
  assertObject(args, 'args');
  if (!Array.isArray(args.dims)) throw new InvalidArgumentError('dims', `expected an array of {lower, upper, step}, got ${describeValue(args.dims)}`);
  const d = args.dims.length;
  if (d < 1 || d > MAX_DIMS) throw new InvalidArgumentError('dims', `expected 1 to ${MAX_DIMS} dimensions, got ${d}`);
  const counts: number[] = [];
  let total = 1;
  args.dims.forEach((g: GridDim, j) => {
    assertObject(g as unknown, `dims[${j}]`);
    assertFiniteNumber(g.lower, `dims[${j}].lower`);
    assertFiniteNumber(g.upper, `dims[${j}].upper`);
    assertFiniteNumber(g.step, `dims[${j}].step`);
    if (g.step <= 0) throw new InvalidArgumentError(`dims[${j}].step`, `must be > 0, got ${g.step}`);
    if (g.lower > g.upper) throw new InvalidArgumentError(`dims[${j}].lower`, `must be <= upper (${g.upper}), got ${g.lower}`);
    const n = gridAxisCount(g);
    if (n > 2 ** 31) throw new InvalidArgumentError(`dims[${j}]`, `${n} points on one axis is more than 2^31`);
    counts.push(n);
    total *= n;
  });
  if (total > Number.MAX_SAFE_INTEGER) throw new InvalidArgumentError('dims', `the grid has ${total} points, more than 2^53`);
  const coefficients = args.coefficients;
  const targetsRaw = args.targets;
  if (!(targetsRaw instanceof Float64Array) && !Array.isArray(targetsRaw)) {
    throw new InvalidArgumentError('targets', `expected a Float64Array or an array of numbers, got ${describeValue(targetsRaw)}`);
  }
  const m = targetsRaw.length;
  const targets = toF64(targetsRaw, 'targets', m);
  const c = toF64(coefficients, 'coefficients', m * d);
  const tolerances = toF64(args.tolerances, 'tolerances', m);
  tolerances.forEach((e, i) => {
    if (e < 0) throw new InvalidArgumentError(`tolerances[${i}]`, `must be >= 0, got ${e}`);
  });
  const maxPoints = args.maxPoints ?? 10_000_000;
  assertInteger(maxPoints, 'maxPoints', 0, 2 ** 31);
  return {
    dims: args.dims.map((g) => ({ lower: g.lower, upper: g.upper, step: g.step })),
    d,
    m,
    counts,
    total,
    axes: args.dims.map(gridAxisValues),
    coefficients: c,
    targets,
    tolerances,
    maxPoints,
  };
}
