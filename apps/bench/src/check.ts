import {
  allowedError,
  compareGridPoints,
  opTolerance,
  OPS,
  verifyResult,
  verifySampled,
  type GridPoints,
  type OpArgs,
  type OpData,
  type OpName,
  type OpProblem,
  type SampledOp,
} from '@kernelkit/ops';

/**
 * The CPU output under the op's tolerance, scaled by the output's largest magnitude instead of
 * each element's Σ|terms| (which only the f64 reference can give).
 */
function compareToCpu(op: OpName, args: OpArgs<OpName>, got: ArrayLike<number>, want: ArrayLike<number>): string | undefined {
  if (got.length !== want.length) return `length ${got.length}, expected ${want.length}`;
  const tol = opTolerance(op, (OPS[op].validate as (a: OpArgs<OpName>) => OpProblem<OpName>)(args));
  let max = 0;
  for (let i = 0; i < want.length; i++) max = Math.max(max, Math.abs(want[i]!));
  const bound = tol === undefined ? 0 : allowedError(tol, max);
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i]! - want[i]!);
    if (!(d <= bound)) return `element ${i} is ${got[i]}, the CPU baseline has ${want[i]} (|diff| ${d.toExponential(2)} > ${bound.toExponential(2)})`;
  }
  return undefined;
}

function bytesEqual(a: ArrayBufferView, b: ArrayBufferView): boolean {
  return a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/**
 * What a result is checked against:
 * - `f64`: the full f64 reference under the op's tolerance (small outputs);
 * - `sampled`: the f64 reference at `samples` seeded outputs (big outputs; grid search whole);
 * - `cpu`: the sequential CPU backend's output, op tolerance × max|output|;
 * - `identical`: the CPU backend's output bit for bit (backends that run the CPU kernels), float
 *   scans under the op's tolerance (their partition changes the summation order).
 */
export type Reference =
  | { readonly kind: 'f64' }
  | { readonly kind: 'sampled'; readonly samples?: number }
  | { readonly kind: 'cpu'; readonly data: OpData<OpName> }
  | { readonly kind: 'identical'; readonly data: OpData<OpName> };

/**
 * Checks one result. Grid searches against the CPU point list (exact) or the f64 brute force;
 * scans against the f64 reference (cheap, exact for integers) unless sampled or identical; the
 * rest as `ref` says.
 */
export function checkResult(op: OpName, args: OpArgs<OpName>, data: OpData<OpName>, ref: Reference): { message?: string; how: string } {
  if (ref.kind === 'sampled') {
    if (op === 'gridSearch') return { ...msg(verifyResult('gridSearch', args as OpArgs<'gridSearch'>, data as GridPoints)), how: 'f64 reference' };
    const samples = ref.samples ?? 2000;
    return { ...msg(verifySampled(op as SampledOp, args as never, data as never, samples)), how: `f64 reference at ${samples} sampled outputs` };
  }
  if (ref.kind === 'identical') {
    if (op === 'gridSearch') return { ...msg(compareGridPoints(data as GridPoints, ref.data as GridPoints)), how: 'bit-identical' };
    if (bytesEqual(data as ArrayBufferView, ref.data as ArrayBufferView)) return { how: 'bit-identical' };
    const float = data instanceof Float32Array || data instanceof Float64Array;
    if (op === 'scan' && float) return { ...msg(verifyResult('scan', args as OpArgs<'scan'>, data)), how: 'within tolerance' };
    return { message: 'differs from the CPU backend (it runs the same kernels in the same order, so it must be bit-identical)', how: 'bit-identical' };
  }
  if (op === 'scan') return { ...msg(verifyResult('scan', args as OpArgs<'scan'>, data as OpData<'scan'>)), how: 'f64 reference' };
  if (ref.kind === 'cpu') {
    if (op === 'gridSearch') return { ...msg(compareGridPoints(data as GridPoints, ref.data as GridPoints)), how: 'identical to the CPU point list' };
    return { ...msg(compareToCpu(op, args, data as ArrayLike<number>, ref.data as ArrayLike<number>)), how: 'CPU output, op tolerance × max|out|' };
  }
  return { ...msg(verifyResult(op as OpName, args as never, data as never)), how: 'f64 reference' };
}

const msg = (m: string | undefined): { message?: string } => (m === undefined ? {} : { message: m });
