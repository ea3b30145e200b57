import { checkTypedArray, InvalidArgumentError, type TypedArrayCtor } from '@kernelkit/core';
import type { OpName, OpProblem, OpTypes } from './backend.js';
import { overlaps } from './common/overlap.js';
import { ctorOf, isDeviceArray, type DeviceArray, type DeviceData, type WithDeviceInput } from './device-array.js';
import { conv2dOutputLength } from './conv2d/shape.js';
import { validateConv2d } from './conv2d/validate.js';
import { convLayerOutputLength } from './conv-layer/shape.js';
import { validateConvLayer } from './conv-layer/validate.js';
import { validateGridSearch } from './grid-search/validate.js';
import { allocScanOutput } from './scan/shape.js';
import { validateScan } from './scan/validate.js';
import { stencil3dOutputLength } from './stencil3d/shape.js';
import { validateStencil3d } from './stencil3d/validate.js';

/** Args or problem of `O`, with `input` also a DeviceArray where the op has an array input. */
export type DeviceForm<A> = A extends { readonly input: DeviceData } ? WithDeviceInput<A> : A;

/** Everything a backend needs to know about an op that is not how to compute it. */
export interface OpDescriptor<O extends OpName> {
  readonly name: O;
  /** DeviceArray inputs validate like the arrays they stand for and stay handles in the problem. */
  validate(args: DeviceForm<OpTypes[O]['args']>): DeviceForm<OpProblem<O>>;
  /**
   * Checks a caller's `options.out` against the problem and returns the plain view over its
   * memory that the runner writes (length from the buffer itself, not from the caller's object);
   * undefined when the op has no fixed-size output.
   */
  checkOut?(p: DeviceForm<OpProblem<O>>, out: unknown): OpTypes[O]['data'];
  allocOut?(p: OpProblem<O>): OpTypes[O]['data'];
}

/** Host arrays among `views` (a DeviceArray input cannot share memory with a host `out`). */
const hostViews = (...views: readonly (ArrayBufferView | DeviceArray | undefined)[]): ArrayBufferView[] =>
  views.filter((v): v is ArrayBufferView => v !== undefined && !isDeviceArray(v));

const inputCtor = (input: DeviceData | DeviceArray): Float32ArrayConstructor => (isDeviceArray(input) ? ctorOf(input.dtype) : input.constructor) as Float32ArrayConstructor;

function checkOutBuffer<C extends TypedArrayCtor>(out: unknown, ctor: C, length: number, inputs: readonly ArrayBufferView[]): InstanceType<C> {
  const view = checkTypedArray(out, 'options.out', [ctor], length);
  for (const v of inputs) if (overlaps(view, v)) throw new InvalidArgumentError('options.out', 'must not share memory with an input');
  return view;
}

/** The same bytes: an in-place call. */
const sameMemory = (a: ArrayBufferView, b: ArrayBufferView): boolean => a.buffer === b.buffer && a.byteOffset === b.byteOffset && a.byteLength === b.byteLength;

/** Problems this module's validators made: passed back as args, they are not read again. */
const validated = new WeakSet<object>();

/**
 * A validator that reads the caller's args once: the problem it returns is frozen and, handed
 * to a backend as args (as the facade does after routing on it), is taken as it is.
 */
function once<A, P extends object>(validate: (args: A) => P): (args: A) => P {
  return (args) => {
    if (typeof args === 'object' && args !== null && validated.has(args)) return args as unknown as P;
    const problem = Object.freeze(validate(args));
    validated.add(problem);
    return problem;
  };
}

export const OPS: { readonly [O in OpName]: OpDescriptor<O> } = {
  conv2d: {
    name: 'conv2d',
    validate: once(validateConv2d),
    checkOut: (p, out) => checkOutBuffer(out, Float32Array, conv2dOutputLength(p), hostViews(p.input, p.filter)),
    allocOut: (p) => new Float32Array(conv2dOutputLength(p)),
  },
  stencil3d: {
    name: 'stencil3d',
    validate: once(validateStencil3d),
    checkOut: (p, out) => checkOutBuffer(out, inputCtor(p.input), stencil3dOutputLength(p), hostViews(p.input)),
    allocOut: (p) => new (p.input.constructor as Float32ArrayConstructor)(stencil3dOutputLength(p)),
  },
  scan: {
    name: 'scan',
    validate: once(validateScan),
    // In-place scans are a common request; every backend reads a chunk before writing it.
    checkOut: (p, out) => {
      const view = checkTypedArray(out, 'options.out', [inputCtor(p.input)], p.input.length);
      if (!isDeviceArray(p.input) && !sameMemory(view, p.input) && overlaps(view, p.input)) {
        throw new InvalidArgumentError('options.out', 'must be the input itself (in place) or not share memory with it');
      }
      return view;
    },
    allocOut: (p) => allocScanOutput(p.input),
  },
  gridSearch: {
    name: 'gridSearch',
    validate: once(validateGridSearch),
  },
  convLayer: {
    name: 'convLayer',
    validate: once(validateConvLayer),
    checkOut: (p, out) => checkOutBuffer(out, Float32Array, convLayerOutputLength(p), hostViews(p.input, p.weights, p.bias)),
    allocOut: (p) => new Float32Array(convLayerOutputLength(p)),
  },
};
