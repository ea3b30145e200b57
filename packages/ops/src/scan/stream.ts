import { InvalidArgumentError, throwIfAborted } from '@kernelkit/core';
import type { ArrayOutput, Backend, RunOptions } from '../backend.js';
import { allocScanOutput, scanDtype } from './shape.js';
import type { ScanArray } from './types.js';

export interface ScanStreamOptions extends Pick<RunOptions, 'variant' | 'signal'> {
  readonly exclusive?: boolean;
  readonly initial?: number;
}

/**
 * Scans a sequence of chunks as one long array: each chunk is scanned with the running carry
 * as `initial`, so arrays larger than memory or than one typed array can be processed.
 * Works on any backend; all chunks must share one element type.
 */
export async function* scanStream<T extends ScanArray>(
  backend: Backend,
  chunks: AsyncIterable<T> | Iterable<T>,
  options: ScanStreamOptions = {},
): AsyncGenerator<T, void, undefined> {
  let carry = options.initial ?? 0;
  let dtype: string | undefined;
  let index = 0;
  const runOptions: RunOptions<T> & ArrayOutput = {
    ...(options.variant === undefined ? {} : { variant: options.variant }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  for await (const chunk of chunks) {
    const dt = ArrayBuffer.isView(chunk) ? scanDtype(chunk) : undefined;
    dtype ??= dt;
    if (dt === undefined || dt !== dtype) throw new InvalidArgumentError(`chunks[${index}]`, `expected a ${dtype ?? 'typed array'} chunk like the first one`);
    const exclusive = options.exclusive ?? false;
    // A running sum that became NaN or ±Infinity cannot be a backend's `initial` (the caller
    // never passed it); it stays non-finite, so this chunk is summed here, in order, as scan would.
    const data = index > 0 && !Number.isFinite(carry) ? carriedScan(chunk, carry, exclusive, options.signal) : (await backend.scan({ input: chunk, exclusive, initial: carry }, runOptions)).data;
    if (chunk.length > 0) {
      const last = data[chunk.length - 1]!;
      const next = options.exclusive ? last + chunk[chunk.length - 1]! : last;
      carry = dtype === 'u32' ? next >>> 0 : dtype === 'i32' ? next | 0 : next;
    }
    index++;
    yield data;
  }
}

/** `carry` followed by the chunk's elements, added in order in the chunk's precision. */
function carriedScan<T extends ScanArray>(chunk: T, carry: number, exclusive: boolean, signal: AbortSignal | undefined): T {
  throwIfAborted(signal);
  const out = allocScanOutput(chunk);
  const round = chunk instanceof Float32Array ? Math.fround : (v: number) => v;
  let s = carry;
  for (let i = 0; i < chunk.length; i++) {
    const next = round(s + chunk[i]!);
    out[i] = exclusive ? s : next;
    s = next;
  }
  return out;
}
