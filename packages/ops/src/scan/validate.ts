import { assertBoolean, assertFiniteNumber, assertInteger, assertObject, assertTypedArray } from '@kernelkit/core';
import { scanDtype } from './shape.js';
import type { ScanArgs, ScanArray, ScanProblem } from './types.js';

export function validateScan<T extends ScanArray>(args: ScanArgs<T>): ScanProblem<T> {
  assertObject(args, 'args');
  assertTypedArray(args.input, 'input', [Uint32Array, Int32Array, Float32Array, Float64Array]);
  const exclusive = args.exclusive ?? false;
  assertBoolean(exclusive, 'exclusive');
  const dtype = scanDtype(args.input);
  const initial = args.initial ?? 0;
  if (dtype === 'u32') assertInteger(initial, 'initial', 0, 2 ** 32 - 1);
  else if (dtype === 'i32') assertInteger(initial, 'initial', -(2 ** 31), 2 ** 31 - 1);
  else assertFiniteNumber(initial, 'initial');
  return { input: args.input, dtype, exclusive, initial };
}
