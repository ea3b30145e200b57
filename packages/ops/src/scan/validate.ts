import { assertBoolean, assertFiniteNumber, assertInteger, assertObject } from '@kernelkit/core';
import { assertArrayOrDevice, dtypeOfInput, type WithDeviceInput } from '../device-array.js';
import type { ScanArgs, ScanArray, ScanProblem } from './types.js';

/** A DeviceArray `input` validates like the array it stands for and stays a handle in the problem. */
export function validateScan<T extends ScanArray>(args: ScanArgs<T>): ScanProblem<T>;
export function validateScan<T extends ScanArray>(args: WithDeviceInput<ScanArgs<T>>): WithDeviceInput<ScanProblem<T>>;
export function validateScan<T extends ScanArray>(args: WithDeviceInput<ScanArgs<T>>): WithDeviceInput<ScanProblem<T>> {
  assertObject(args, 'args');
  assertArrayOrDevice(args.input, 'input', [Uint32Array, Int32Array, Float32Array, Float64Array]);
  const exclusive = args.exclusive ?? false;
  assertBoolean(exclusive, 'exclusive');
  const dtype = dtypeOfInput(args.input);
  const initial = args.initial ?? 0;
  if (dtype === 'u32') assertInteger(initial, 'initial', 0, 2 ** 32 - 1);
  else if (dtype === 'i32') assertInteger(initial, 'initial', -(2 ** 31), 2 ** 31 - 1);
  else assertFiniteNumber(initial, 'initial');
  return { input: args.input, dtype, exclusive, initial };
}
