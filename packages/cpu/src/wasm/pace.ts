import { AbortError } from '@kernelkit/core';

const MAX_SLICE_MS = 30;

/**
 * Between bands of a long call: about every `MAX_SLICE_MS` of work, yield to the event loop (so
 * an abort can land) and throw `AbortError` if it did. Without a signal there is nothing to
 * wait for and `tick` returns undefined at once.
 */
export class Pacer {
  private last = performance.now();
  constructor(private readonly signal: AbortSignal | undefined) {}
  tick(): Promise<void> | undefined {
    if (this.signal === undefined || performance.now() - this.last < MAX_SLICE_MS) return undefined;
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.last = performance.now();
      if (this.signal!.aborted) throw new AbortError(this.signal!.reason);
    });
  }
}

/** Runs `run(from, to)` over [0, total) in slices of `slice`, pacing between them (see Pacer). */
export async function forSlices(signal: AbortSignal | undefined, total: number, slice: number, run: (from: number, to: number) => void): Promise<void> {
  const pacer = new Pacer(signal);
  for (let from = 0; from < total; from += slice) {
    run(from, Math.min(total, from + slice));
    const wait = pacer.tick();
    if (wait !== undefined) await wait;
  }
}
