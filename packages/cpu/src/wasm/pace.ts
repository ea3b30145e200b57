import { Pacer } from '@kernelkit/core';

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
