import { assertTypedArray, InvalidArgumentError } from '@kernelkit/core';
import type { OpName, OpProblem, OpTypes } from './backend.js';
import { overlaps } from './common/overlap.js';
import { conv2dOutputLength } from './conv2d/shape.js';
import { validateConv2d } from './conv2d/validate.js';
import { convLayerOutputLength } from './conv-layer/shape.js';
import { validateConvLayer } from './conv-layer/validate.js';
import { validateGridSearch } from './grid-search/validate.js';
import { allocScanOutput } from './scan/shape.js';
import { validateScan } from './scan/validate.js';
import { stencil3dOutputLength } from './stencil3d/shape.js';
import { validateStencil3d } from './stencil3d/validate.js';

/** Everything a backend needs to know about an op that is not how to compute it. */
export interface OpDescriptor<O extends OpName> {
  readonly name: O;
  validate(args: OpTypes[O]['args']): OpProblem<O>;
  /** Checks a caller's `options.out` against the problem; undefined when the op has no fixed-size output. */
  checkOut?(p: OpProblem<O>, out: unknown): void;
  allocOut?(p: OpProblem<O>): OpTypes[O]['data'];
}

function checkOutBuffer(out: unknown, ctor: Float32ArrayConstructor | Float64ArrayConstructor | Uint32ArrayConstructor | Int32ArrayConstructor, length: number, inputs: readonly ArrayBufferView[]): void {
  assertTypedArray(out, 'options.out', [ctor], length);
  for (const v of inputs) if (overlaps(out as ArrayBufferView, v)) throw new InvalidArgumentError('options.out', 'must not share memory with an input');
}

export const OPS: { readonly [O in OpName]: OpDescriptor<O> } = {
  conv2d: {
    name: 'conv2d',
    validate: validateConv2d,
    checkOut: (p, out) => checkOutBuffer(out, Float32Array, conv2dOutputLength(p), [p.input, p.filter]),
    allocOut: (p) => new Float32Array(conv2dOutputLength(p)),
  },
  stencil3d: {
    name: 'stencil3d',
    validate: validateStencil3d,
    checkOut: (p, out) => checkOutBuffer(out, p.input.constructor as Float32ArrayConstructor, stencil3dOutputLength(p), [p.input]),
    allocOut: (p) => new (p.input.constructor as Float32ArrayConstructor)(stencil3dOutputLength(p)),
  },
  scan: {
    name: 'scan',
    validate: validateScan,
    // In-place scans are a common request; every backend reads a chunk before writing it.
    checkOut: (p, out) => {
      assertTypedArray(out, 'options.out', [p.input.constructor as Float32ArrayConstructor], p.input.length);
      if (out !== p.input && overlaps(out as ArrayBufferView, p.input)) {
        throw new InvalidArgumentError('options.out', 'must be the input itself (in place) or not share memory with it');
      }
    },
    allocOut: (p) => allocScanOutput(p.input),
  },
  gridSearch: {
    name: 'gridSearch',
    validate: validateGridSearch,
  },
  convLayer: {
    name: 'convLayer',
    validate: validateConvLayer,
    checkOut: (p, out) => checkOutBuffer(out, Float32Array, convLayerOutputLength(p), [p.input, p.weights, ...(p.bias ? [p.bias] : [])]),
    allocOut: (p) => new Float32Array(convLayerOutputLength(p)),
  },
};
