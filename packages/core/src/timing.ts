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
