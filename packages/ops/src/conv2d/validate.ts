import { assertInteger, assertObject, assertTypedArray, checkedProduct, InvalidArgumentError } from '@kernelkit/core';
import type { Conv2dArgs, Conv2dProblem } from './types.js';

export function validateConv2d(args: Conv2dArgs): Conv2dProblem {
  assertObject(args, 'args');
  const batch = args.batch ?? 1;
  assertInteger(batch, 'batch', 1);
  assertInteger(args.height, 'height', 1);
  assertInteger(args.width, 'width', 1);
  assertInteger(args.k, 'k', 1, 4095);
  if (args.k % 2 === 0) throw new InvalidArgumentError('k', `must be odd (the filter needs a centre), got ${args.k}`);
  const n = checkedProduct('input', [batch, args.height, args.width], 2 ** 32 - 1);
  assertTypedArray(args.input, 'input', [Float32Array], n, 'batch*height*width');
  assertTypedArray(args.filter, 'filter', [Float32Array], args.k * args.k, 'k*k');
  return { input: args.input, filter: args.filter, batch, height: args.height, width: args.width, k: args.k };
}
