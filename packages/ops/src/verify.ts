import type { OpArgs, OpData, OpName } from './backend.js';
import { conv2dReference } from './conv2d/reference.js';
import { validateConv2d } from './conv2d/validate.js';
import { convLayerReference } from './conv-layer/reference.js';
import { validateConvLayer } from './conv-layer/validate.js';
import { gridSearchReference } from './grid-search/reference.js';
import type { GridPoints } from './grid-search/types.js';
import { validateGridSearch } from './grid-search/validate.js';
import { scanReference } from './scan/reference.js';
import type { ScanArray } from './scan/types.js';
import { validateScan } from './scan/validate.js';
import { stencil3dReference } from './stencil3d/reference.js';
import { validateStencil3d } from './stencil3d/validate.js';
import { assertInteger } from '@kernelkit/core';
import { sampleIndices } from './common/sample.js';
import { conv2dOutputLength } from './conv2d/shape.js';
import { convLayerOutputLength } from './conv-layer/shape.js';
import { sampledReference, type SampledOp } from './sample.js';
import { stencil3dOutputLength } from './stencil3d/shape.js';
import { compareExact, compareFloat } from './testing/compare.js';
import { conv2dTolerance, convLayerTolerance, scanTolerance, stencil3dTolerance } from './testing/tolerance.js';

/** Compares two grid-search results point for point; returns a message on the first difference. */
export function compareGridPoints(got: GridPoints, want: GridPoints): string | undefined {
  if (got.dims !== want.dims) return `dims ${got.dims}, expected ${want.dims}`;
  const n = Math.min(got.count, want.count);
  for (let i = 0; i < n * want.dims; i++) {
    if (!Object.is(got.points[i], want.points[i])) {
      const p = Math.floor(i / want.dims);
      const show = (r: GridPoints) => Array.from(r.points.subarray(p * r.dims, (p + 1) * r.dims)).join(', ');
      return `point ${p} is (${show(got)}), expected (${show(want)})`;
    }
  }
  if (got.count !== want.count) return `count ${got.count}, expected ${want.count}`;
  if (got.points.length !== want.count * want.dims) return `points has length ${got.points.length}, expected ${want.count * want.dims}`;
  return undefined;
}

/**
 * Checks a backend's output against the f64 reference under the op's stated tolerance.
 * Returns undefined when it conforms, else a message naming the first bad element.
 * `reference` may supply a precomputed grid-search answer (the brute force is slow).
 */
export function verifyResult<O extends OpName>(op: O, args: OpArgs<O>, data: OpData<O>, reference?: { grid?: GridPoints }): string | undefined {
  switch (op) {
    case 'conv2d': {
      const p = validateConv2d(args as OpArgs<'conv2d'>);
      return compareFloat(data as Float32Array, conv2dReference(p), conv2dReference(p, true), conv2dTolerance(p.k))?.message;
    }
    case 'stencil3d': {
      const p = validateStencil3d(args as OpArgs<'stencil3d'>);
      const dtype = p.input instanceof Float64Array ? 'f64' : 'f32';
      if (!((data as object) instanceof p.input.constructor)) return `output is ${(data as object).constructor.name}, expected ${p.input.constructor.name}`;
      return compareFloat(data as Float32Array, stencil3dReference(p), stencil3dReference(p, true), stencil3dTolerance(p.steps, dtype))?.message;
    }
    case 'scan': {
      const p = validateScan(args as OpArgs<'scan'>);
      const got = data as ScanArray;
      if (!(got instanceof p.input.constructor)) return `output is ${got.constructor.name}, expected ${p.input.constructor.name}`;
      if (p.dtype === 'u32' || p.dtype === 'i32') return compareExact(got, scanReference(p))?.message;
      return compareFloat(got, scanReference(p), scanReference(p, true), scanTolerance(p.input.length, p.dtype))?.message;
    }
    case 'gridSearch': {
      const want = reference?.grid ?? gridSearchReference(validateGridSearch(args as OpArgs<'gridSearch'>));
      return compareGridPoints(data as GridPoints, want);
    }
    case 'convLayer': {
      const p = validateConvLayer(args as OpArgs<'convLayer'>);
      return compareFloat(data as Float32Array, convLayerReference(p), convLayerReference(p, true), convLayerTolerance(p.channels, p.k))?.message;
    }
  }
  return `unknown op ${String(op)}`;
}

/** Sampled stencil checks cost (2·steps+1)³·steps each: at most this many cell updates per check. */
const STENCIL_SAMPLE_BUDGET = 2e8;

/**
 * Checks `count` seeded outputs (plus the first and the last) against `sampledReference`, for
 * outputs too big for `verifyResult`'s full f64 reference. Returns undefined when they conform,
 * else a message naming the first bad sample.
 */
export function verifySampled<O extends SampledOp>(op: O, args: OpArgs<O>, data: OpData<O>, count = 2000): string | undefined {
  assertInteger(count, 'count', 0);
  const got = data as ArrayLike<number>;
  let length: number;
  let n = count;
  switch (op) {
    case 'conv2d':
      length = conv2dOutputLength(validateConv2d(args as OpArgs<'conv2d'>));
      break;
    case 'convLayer':
      length = convLayerOutputLength(validateConvLayer(args as OpArgs<'convLayer'>));
      break;
    case 'stencil3d': {
      const p = validateStencil3d(args as OpArgs<'stencil3d'>);
      length = stencil3dOutputLength(p);
      n = Math.min(count, Math.max(4, Math.floor(STENCIL_SAMPLE_BUDGET / ((2 * p.steps + 1) ** 3 * Math.max(1, p.steps)))));
      break;
    }
    default:
      length = validateScan(args as OpArgs<'scan'>).input.length;
  }
  if (got.length !== length) return `length ${got.length}, expected ${length}`;
  if (length === 0) return undefined;
  for (const s of sampledReference(op, args, sampleIndices(length, n))) {
    const g = got[s.index]!;
    if (!(Math.abs(g - s.value) <= s.bound)) return `[${s.index}] got ${g}, expected ${s.value}${s.bound === 0 ? ' (bit-exact)' : ` ± ${s.bound.toExponential(3)}`}`;
  }
  return undefined;
}
