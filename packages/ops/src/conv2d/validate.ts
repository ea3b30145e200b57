import { assertInteger, assertObject, assertTypedArray, checkedProduct, InvalidArgumentError } from '@kernelkit/core';
import { assertArrayOrDevice, type WithDeviceInput } from '../device-array.js';
import type { Conv2dArgs, Conv2dProblem } from './types.js';

/** A DeviceArray `input` validates like the array it stands for and stays a handle in the problem. */
export function validateConv2d(args: Conv2dArgs): Conv2dProblem;
export function validateConv2d(args: WithDeviceInput<Conv2dArgs>): WithDeviceInput<Conv2dProblem>;
export function validateConv2d(args: WithDeviceInput<Conv2dArgs>): WithDeviceInput<Conv2dProblem> {
  assertObject(args, 'args');
  const batch = args.batch ?? 1;
  assertInteger(batch, 'batch', 1);
  assertInteger(args.height, 'height', 1);
  assertInteger(args.width, 'width', 1);
  assertInteger(args.k, 'k', 1, 4095);
  if (args.k % 2 === 0) throw new InvalidArgumentError('k', `must be odd (the filter needs a centre), got ${args.k}`);
  const n = checkedProduct('input', [batch, args.height, args.width], 2 ** 32 - 1);
  assertArrayOrDevice(args.input, 'input', [Float32Array], n, 'batch*height*width');
  assertTypedArray(args.filter, 'filter', [Float32Array], args.k * args.k, 'k*k');
  return { input: args.input, filter: args.filter, batch, height: args.height, width: args.width, k: args.k };
}
