/** Milliseconds from a monotonic clock. */
export const now = (): number => performance.now();

export interface Timing {
  /** Wall time of the whole call, validation excluded. */
  readonly totalMs: number;
  /** Device time of the kernels alone (GPU timestamp queries) or the compute part on CPU backends. */
  readonly kernelMs?: number;
  readonly uploadMs?: number;
  readonly readbackMs?: number;
}

/** Keeps only the fields that are defined (exactOptionalPropertyTypes-friendly). */
export function makeTiming(parts: { totalMs: number; kernelMs?: number | undefined; uploadMs?: number | undefined; readbackMs?: number | undefined }): Timing {
  const t: { totalMs: number; kernelMs?: number; uploadMs?: number; readbackMs?: number } = { totalMs: parts.totalMs };
  if (parts.kernelMs !== undefined) t.kernelMs = parts.kernelMs;
  if (parts.uploadMs !== undefined) t.uploadMs = parts.uploadMs;
  if (parts.readbackMs !== undefined) t.readbackMs = parts.readbackMs;
  return t;
}

/** Median of `xs` (the mean of the two middle values for an even count); NaN when empty. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
