import { compareGridPoints, verifyResult, type GridPoints, type OpArgs, type OpData, type OpName } from '@kernelkit/ops';

/**
 * Per-op error factor for comparing against the sequential CPU output (the f64-accumulated
 * baseline), as in @kernelkit/ops' TOLERANCE_SUMMARY but scaled by the output's largest
 * magnitude instead of each element's Σ|terms| (which only the f64 reference can give).
 */
function floatFactor(op: OpName, args: OpArgs<OpName>): number {
  switch (op) {
    case 'conv2d': {
      const k = (args as OpArgs<'conv2d'>).k;
      return k * k + 2;
    }
    case 'convLayer': {
      const a = args as OpArgs<'convLayer'>;
      return a.channels * a.k * a.k + 3;
    }
    case 'stencil3d':
      return 10 * Math.max(1, (args as OpArgs<'stencil3d'>).steps ?? 1) + 2;
    default:
      return 64;
  }
}

function compareToCpu(op: OpName, args: OpArgs<OpName>, got: ArrayLike<number>, want: ArrayLike<number>): string | undefined {
  if (got.length !== want.length) return `length ${got.length}, expected ${want.length}`;
  let max = 0;
  for (let i = 0; i < want.length; i++) max = Math.max(max, Math.abs(want[i]!));
  const bound = floatFactor(op, args) * 2 ** -24 * max + 1e-30;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i]! - want[i]!);
    if (!(d <= bound)) return `element ${i} is ${got[i]}, the CPU baseline has ${want[i]} (|diff| ${d.toExponential(2)} > ${bound.toExponential(2)})`;
  }
  return undefined;
}

export type Reference = { readonly kind: 'f64' } | { readonly kind: 'cpu'; readonly data: OpData<OpName> };

/**
 * Checks one result. Scans are always checked against the f64 reference (cheap, exact for
 * integers); grid searches against the CPU point list (exact); the rest against the f64
 * reference when `ref.kind === 'f64'`, else against the CPU output.
 */
export function checkResult(op: OpName, args: OpArgs<OpName>, data: OpData<OpName>, ref: Reference): { message?: string; how: string } {
  if (op === 'scan') return { ...msg(verifyResult('scan', args as OpArgs<'scan'>, data as OpData<'scan'>)), how: 'f64 reference' };
  if (ref.kind === 'cpu') {
    if (op === 'gridSearch') return { ...msg(compareGridPoints(data as GridPoints, ref.data as GridPoints)), how: 'identical to the CPU point list' };
    return { ...msg(compareToCpu(op, args, data as ArrayLike<number>, ref.data as ArrayLike<number>)), how: 'CPU output, op tolerance × max|out|' };
  }
  return { ...msg(verifyResult(op as OpName, args as never, data as never)), how: 'f64 reference' };
}

const msg = (m: string | undefined): { message?: string } => (m === undefined ? {} : { message: m });
