import { assertBoolean, assertInteger, checkTypedArray, checkedProduct, InvalidArgumentError } from '@kernelkit/core';
import { readArgs } from '../common/args.js';
import { checkArrayOrDevice, type WithDeviceInput } from '../device-array.js';
import { convLayerOutputShape } from './shape.js';
import type { ConvLayerArgs, ConvLayerProblem } from './types.js';

const KEYS = ['input', 'weights', 'batch', 'channels', 'height', 'width', 'maps', 'k', 'bias', 'relu'] as const;

/**
 * Each argument is read once and the problem keeps what was checked (see `readArgs`). A
 * DeviceArray `input` validates like the array it stands for and stays a handle in the problem.
 */
export function validateConvLayer(args: ConvLayerArgs): ConvLayerProblem;
export function validateConvLayer(args: WithDeviceInput<ConvLayerArgs>): WithDeviceInput<ConvLayerProblem>;
export function validateConvLayer(args: WithDeviceInput<ConvLayerArgs>): WithDeviceInput<ConvLayerProblem> {
  const a = readArgs(args, 'args', KEYS);
  const { batch, channels, height, width, maps, k } = a;
  assertInteger(batch, 'batch', 1);
  assertInteger(channels, 'channels', 1);
  assertInteger(height, 'height', 1);
  assertInteger(width, 'width', 1);
  assertInteger(maps, 'maps', 1);
  assertInteger(k, 'k', 1);
  if (k > height || k > width) {
    throw new InvalidArgumentError('k', `must be <= height and width (no padding), got k=${k} for ${height}×${width}`);
  }
  const n = checkedProduct('input', [batch, channels, height, width], 2 ** 32 - 1);
  const input = checkArrayOrDevice<Float32Array>(a.input, 'input', [Float32Array], n, 'batch*channels*height*width');
  const weights = checkTypedArray(a.weights, 'weights', [Float32Array], checkedProduct('weights', [maps, channels, k, k]), 'maps*channels*k*k');
  const bias = a.bias === undefined ? undefined : checkTypedArray(a.bias, 'bias', [Float32Array], maps, 'maps');
  const relu = a.relu ?? false;
  assertBoolean(relu, 'relu');
  const { outHeight, outWidth } = convLayerOutputShape({ height, width, k });
  checkedProduct('output', [batch, maps, outHeight, outWidth], 2 ** 32 - 1);
  return { input, weights, batch, channels, height, width, maps, k, bias, relu, outHeight, outWidth };
}
