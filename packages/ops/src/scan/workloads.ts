import { randomF32, randomI32, randomU32 } from '../common/random.js';
import type { ScanArgs, ScanArray, ScanDtype } from './types.js';

export interface ScanWorkload {
  readonly id: string;
  readonly label: string;
  readonly n: number;
  readonly dtype: Exclude<ScanDtype, 'f64'>;
}

/** Course report 003 scans 40M elements; 400M is the size of the steady-state kernel-time target. */
export const SCAN_WORKLOADS = {
  small: [
    { id: 'scan-4M-u32', label: '4M u32', n: 4_000_000, dtype: 'u32' },
    { id: 'scan-4M-f32', label: '4M f32', n: 4_000_000, dtype: 'f32' },
  ],
  /** The sizes of the course reports the project grew from (the bench's `--workload seed`). */
  seed: [
    { id: 'scan-40M-u32', label: '40M u32', n: 40_000_000, dtype: 'u32' },
    { id: 'scan-40M-f32', label: '40M f32', n: 40_000_000, dtype: 'f32' },
    { id: 'scan-400M-f32', label: '400M f32', n: 400_000_000, dtype: 'f32' },
  ],
} as const satisfies Record<string, readonly ScanWorkload[]>;

export function makeScanArgs(w: Omit<ScanWorkload, 'id' | 'label'>, seed = 1): ScanArgs<ScanArray> {
  const input = w.dtype === 'u32' ? randomU32(w.n, seed) : w.dtype === 'i32' ? randomI32(w.n, seed) : randomF32(w.n, seed);
  return { input };
}
