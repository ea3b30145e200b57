import { AbortError } from './errors.js';

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
