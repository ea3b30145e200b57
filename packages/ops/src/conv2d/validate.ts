import { assertInteger, checkTypedArray, checkedProduct, InvalidArgumentError } from '@kernelkit/core';
import { readArgs } from '../common/args.js';
import { checkArrayOrDevice, type WithDeviceInput } from '../device-array.js';
import type { Conv2dArgs, Conv2dProblem } from './types.js';

const KEYS = ['input', 'filter', 'batch', 'height', 'width', 'k'] as const;

/**
 * Each argument is read once and the problem keeps what was checked (see `readArgs`). A
 * DeviceArray `input` validates like the array it stands for and stays a handle in the problem.
 */
export function validateConv2d(args: Conv2dArgs): Conv2dProblem;
export function validateConv2d(args: WithDeviceInput<Conv2dArgs>): WithDeviceInput<Conv2dProblem>;
export function validateConv2d(args: WithDeviceInput<Conv2dArgs>): WithDeviceInput<Conv2dProblem> {
  const a = readArgs(args, 'args', KEYS);
  const batch = a.batch ?? 1;
  const { height, width, k } = a;
  assertInteger(batch, 'batch', 1);
  assertInteger(height, 'height', 1);
  assertInteger(width, 'width', 1);
  assertInteger(k, 'k', 1, 4095);
  if (k % 2 === 0) throw new InvalidArgumentError('k', `must be odd (the filter needs a centre), got ${k}`);
  const n = checkedProduct('input', [batch, height, width], 2 ** 32 - 1);
  const input = checkArrayOrDevice<Float32Array>(a.input, 'input', [Float32Array], n, 'batch*height*width');
  const filter = checkTypedArray(a.filter, 'filter', [Float32Array], k * k, 'k*k');
  return { input, filter, batch, height, width, k };
}
