import { InvalidArgumentError } from '@kernelkit/core';
import type { OpArgs, OpName } from './backend.js';
import type { SampledValue } from './common/sample.js';
import { conv2dSample } from './conv2d/sample.js';
import { validateConv2d } from './conv2d/validate.js';
import { convLayerSample } from './conv-layer/sample.js';
import { validateConvLayer } from './conv-layer/validate.js';
import { scanSample } from './scan/sample.js';
import { validateScan } from './scan/validate.js';
import { stencil3dSample } from './stencil3d/sample.js';
import { validateStencil3d } from './stencil3d/validate.js';

/** The ops with one array output (grid search returns a point list, checked whole). */
export type SampledOp = Exclude<OpName, 'gridSearch'>;

/**
 * The f64 reference value of the op's output at each of `indices`, with the error the op's
 * tolerance allows there: a cheap check of outputs too big for the full reference.
 */
export function sampledReference<O extends SampledOp>(op: O, args: OpArgs<O>, indices: readonly number[]): SampledValue[] {
  switch (op) {
    case 'conv2d':
      return conv2dSample(validateConv2d(args as OpArgs<'conv2d'>), indices);
    case 'convLayer':
      return convLayerSample(validateConvLayer(args as OpArgs<'convLayer'>), indices);
    case 'stencil3d':
      return stencil3dSample(validateStencil3d(args as OpArgs<'stencil3d'>), indices);
    case 'scan':
      return scanSample(validateScan(args as OpArgs<'scan'>), indices);
  }
  throw new InvalidArgumentError('op', `expected conv2d, convLayer, stencil3d or scan, got ${String(op)}`);
}
