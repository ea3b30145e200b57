import {
  OPS, ctorOf, dtypeOf, convLayerMultiplyAdds, gridSearchWork, convLayerOutputLength, conv2dMultiplyAdds, conv2dOutputLength, isDeviceArray, scanBytes, stencil3dOutputLength, stencil3dPointUpdates,
  type DeviceArray, type DeviceData, type OpName,
} from '@kernelkit/ops';
import type { CallShape, InputPlace } from './cost-model.js';

/** Bytes of an array input, host or handle. */
function bytesOf(a: DeviceData | DeviceArray): number {
  return isDeviceArray(a) ? a.length * ctorOf(a.dtype).BYTES_PER_ELEMENT : a.byteLength;
}

const dtypeOfInput = (a: DeviceData | DeviceArray): string => (isDeviceArray(a) ? a.dtype : dtypeOf(a));

function placeOf(a: DeviceData | DeviceArray): InputPlace {
  return isDeviceArray(a) ? { kind: 'device', backend: a.backend, location: a.location } : { kind: 'host' };
}

/**
 * The size of a call in the model's terms. The op's validator runs first, so a bad argument
 * fails here with its named error before anything is started or calibrated; the counts come
 * from @kernelkit/ops.
 */
export function callShape(op: OpName, args: unknown, output: 'array' | 'device' = 'array'): CallShape {
  const validate = OPS[op].validate as (a: unknown) => unknown;
  switch (op) {
    case 'conv2d': {
      const p = validate(args) as ReturnType<(typeof OPS)['conv2d']['validate']>;
      return { op, work: conv2dMultiplyAdds(p), passes: 1, inputBytes: bytesOf(p.input) + p.filter.byteLength, outputBytes: 4 * conv2dOutputLength(p), input: placeOf(p.input), output };
    }
    case 'stencil3d': {
      const p = validate(args) as ReturnType<(typeof OPS)['stencil3d']['validate']>;
      const bytes = bytesOf(p.input);
      return {
        op, work: stencil3dPointUpdates(p), passes: Math.max(1, p.steps), inputBytes: bytes, outputBytes: bytes * (stencil3dOutputLength(p) / p.input.length), input: placeOf(p.input), output, dtype: dtypeOfInput(p.input),
      };
    }
    case 'scan': {
      const p = validate(args) as ReturnType<(typeof OPS)['scan']['validate']>;
      const bytes = bytesOf(p.input);
      return { op, work: scanBytes(p.input.length, p.dtype), passes: 1, inputBytes: bytes, outputBytes: bytes, input: placeOf(p.input), output, dtype: p.dtype };
    }
    case 'gridSearch': {
      const p = validate(args) as ReturnType<(typeof OPS)['gridSearch']['validate']>;
      return { op, work: gridSearchWork(p), passes: 1, inputBytes: 0, outputBytes: 0, input: { kind: 'host' }, output: 'array' };
    }
    case 'convLayer': {
      const p = validate(args) as ReturnType<(typeof OPS)['convLayer']['validate']>;
      return {
        op, work: convLayerMultiplyAdds(p), passes: 1, inputBytes: bytesOf(p.input) + p.weights.byteLength, outputBytes: 4 * convLayerOutputLength(p), input: placeOf(p.input), output,
      };
    }
  }
}
