import { vsFloor, type MemoryFloor } from '../floor.js';
import type { Row } from '../types.js';

export function fmtMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : ms >= 10 ? `${ms.toFixed(1)} ms` : `${ms.toFixed(3)} ms`;
}

export function fmtNum(v: number): string {
  if (v === 0) return '0';
  if (Math.abs(v) >= 1e6 || Math.abs(v) < 0.01) return v.toExponential(2);
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}

export const fmtX = (v: number | undefined): string => (v === undefined ? '' : `${v.toFixed(2)}×`);

/** A row's median ÷ its output's floor time, e.g. `3.2×`; '' for rows without an output array. */
export function fmtFloor(row: Row, floor: MemoryFloor): string {
  if (row.status !== 'ok' || row.outputBytes === undefined || row.outputBytes === 0) return '';
  const v = vsFloor(row.stats.medianMs, row.outputBytes, floor);
  return `${v >= 10 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toFixed(2)}×`;
}
