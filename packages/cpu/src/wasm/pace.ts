import { AbortError } from '@kernelkit/core';

const MAX_SLICE_MS = 30;

/**
 * Between slices of a long call: about every `MAX_SLICE_MS` of work, yield to the event loop (so
 * an abort can land and other work runs) and throw `AbortError` if the signal fired. A call
 * shorter than that never yields, so short calls cost one clock read per slice.
 */
export class Pacer {
  private last = performance.now();
  constructor(private readonly signal: AbortSignal | undefined) {}
  tick(): Promise<void> | undefined {
    if (performance.now() - this.last < MAX_SLICE_MS) return undefined;
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.last = performance.now();
      if (this.signal?.aborted) throw new AbortError(this.signal.reason);
    });
  }
}

/**
 * Runs `run(from, to)` over [0, total) in slices of `slice`, pacing between them (see Pacer).
 * Size a slice to a few milliseconds of work: the pacer only reads the clock between slices.
 */
export async function forSlices(signal: AbortSignal | undefined, total: number, slice: number, run: (from: number, to: number) => void): Promise<void> {
  const pacer = new Pacer(signal);
  for (let from = 0; from < total; from += slice) {
    run(from, Math.min(total, from + slice));
    const wait = pacer.tick();
    if (wait !== undefined) await wait;
  }
}
