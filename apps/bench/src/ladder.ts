import type { OpName } from '@kernelkit/ops';
import type { Row } from './types.js';

/** Each op's variants from the simplest to the most optimised, as the course reports built them up (DESIGN.md); variants not listed keep the backend's order after them. */
export const LADDERS: Readonly<Record<OpName, readonly string[]>> = {
  conv2d: ['direct', 'naive', 'coalesced', 'tiled', 'coarsened', 'auto'],
  stencil3d: ['direct', 'naive', 'tiled', 'streamed'],
  scan: ['sequential', 'blelloch', 'reduce-then-scan', 'decoupled'],
  gridSearch: ['naive', 'optimized', 'pruned'],
  convLayer: ['direct', 'tiled', 'gemm', 'int8-subgroup-matrix'],
};

export function ladderOrder(op: OpName, variants: readonly string[]): string[] {
  const rank = (v: string) => {
    const i = LADDERS[op].indexOf(v);
    return i < 0 ? LADDERS[op].length + variants.indexOf(v) : i;
  };
  return [...variants].sort((a, b) => rank(a) - rank(b));
}

type OkRow = Extract<Row, { status: 'ok' }>;

/** Speed-ups over the sequential CPU backend's default variant and over the previous variant of the same backend. */
export function withSpeedups(rows: readonly Row[], cpuDefault: Readonly<Partial<Record<OpName, string>>>): Row[] {
  const ok = rows.filter((r): r is OkRow => r.status === 'ok');
  return rows.map((r) => {
    if (r.status !== 'ok') return r;
    const base = ok.find((b) => b.backend === 'cpu' && b.caseId === r.caseId && b.variant === cpuDefault[r.op]);
    const ladder = ok.filter((b) => b.backend === r.backend && b.caseId === r.caseId);
    const i = ladder.indexOf(r);
    const prev = i > 0 ? ladder[i - 1] : undefined;
    return {
      ...r,
      ...(base ? { speedupVsSequential: base.stats.medianMs / r.stats.medianMs } : {}),
      ...(prev ? { speedupVsPrevious: { over: prev.variant, value: prev.stats.medianMs / r.stats.medianMs } } : {}),
    };
  });
}
