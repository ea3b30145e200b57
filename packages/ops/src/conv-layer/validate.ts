import { assertBoolean, assertInteger, assertObject, assertTypedArray, checkedProduct, InvalidArgumentError } from '@kernelkit/core';
import { assertArrayOrDevice, type WithDeviceInput } from '../device-array.js';
import { convLayerOutputShape } from './shape.js';
import type { ConvLayerArgs, ConvLayerProblem } from './types.js';

/** A DeviceArray `input` validates like the array it stands for and stays a handle in the problem. */
export function validateConvLayer(args: ConvLayerArgs): ConvLayerProblem;
export function validateConvLayer(args: WithDeviceInput<ConvLayerArgs>): WithDeviceInput<ConvLayerProblem>;
export function validateConvLayer(args: WithDeviceInput<ConvLayerArgs>): WithDeviceInput<ConvLayerProblem> {
  assertObject(args, 'args');
  assertInteger(args.batch, 'batch', 1);
  assertInteger(args.channels, 'channels', 1);
  assertInteger(args.height, 'height', 1);
  assertInteger(args.width, 'width', 1);
  assertInteger(args.maps, 'maps', 1);
  assertInteger(args.k, 'k', 1);
  if (args.k > args.height || args.k > args.width) {
    throw new InvalidArgumentError('k', `must be <= height and width (no padding), got k=${args.k} for ${args.height}×${args.width}`);
  }
  const n = checkedProduct('input', [args.batch, args.channels, args.height, args.width], 2 ** 32 - 1);
  assertArrayOrDevice(args.input, 'input', [Float32Array], n, 'batch*channels*height*width');
  assertTypedArray(args.weights, 'weights', [Float32Array], checkedProduct('weights', [args.maps, args.channels, args.k, args.k]), 'maps*channels*k*k');
  if (args.bias !== undefined) assertTypedArray(args.bias, 'bias', [Float32Array], args.maps, 'maps');
  const relu = args.relu ?? false;
  assertBoolean(relu, 'relu');
  const { outHeight, outWidth } = convLayerOutputShape(args);
  checkedProduct('output', [args.batch, args.maps, outHeight, outWidth], 2 ** 32 - 1);
  return {
    input: args.input,
    weights: args.weights,
    batch: args.batch,
    channels: args.channels,
    height: args.height,
    width: args.width,
    maps: args.maps,
    k: args.k,
    bias: args.bias,
    relu,
    outHeight,
    outWidth,
  };
}
