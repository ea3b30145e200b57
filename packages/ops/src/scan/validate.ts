import { assertBoolean, assertFiniteNumber, assertInteger } from '@kernelkit/core';
import { readArgs } from '../common/args.js';
import { checkArrayOrDevice, dtypeOfInput, type WithDeviceInput } from '../device-array.js';
import type { ScanArgs, ScanArray, ScanProblem } from './types.js';

const KEYS = ['input', 'exclusive', 'initial'] as const;

/**
 * Each argument is read once and the problem keeps what was checked (see `readArgs`). A
 * DeviceArray `input` validates like the array it stands for and stays a handle in the problem.
 * `initial: -0` is taken as +0, so an exclusive scan's first element is +0 on every backend
 * (GPU backends cannot tell the two apart).
 */
export function validateScan<T extends ScanArray>(args: ScanArgs<T>): ScanProblem<T>;
export function validateScan<T extends ScanArray>(args: WithDeviceInput<ScanArgs<T>>): WithDeviceInput<ScanProblem<T>>;
export function validateScan<T extends ScanArray>(args: WithDeviceInput<ScanArgs<T>>): WithDeviceInput<ScanProblem<T>> {
  const a = readArgs(args, 'args', KEYS);
  const input = checkArrayOrDevice<T>(a.input, 'input', [Uint32Array, Int32Array, Float32Array, Float64Array]);
  const exclusive = a.exclusive ?? false;
  assertBoolean(exclusive, 'exclusive');
  const dtype = dtypeOfInput(input);
  const initial = a.initial ?? 0;
  if (dtype === 'u32') assertInteger(initial, 'initial', 0, 2 ** 32 - 1);
  else if (dtype === 'i32') assertInteger(initial, 'initial', -(2 ** 31), 2 ** 31 - 1);
  else assertFiniteNumber(initial, 'initial');
  return { input, dtype, exclusive, initial: initial === 0 ? 0 : initial };
}
