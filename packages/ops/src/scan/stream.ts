import { InvalidArgumentError } from '@kernelkit/core';
import type { ArrayOutput, Backend, RunOptions } from '../backend.js';
import { scanDtype } from './shape.js';
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
    const { data } = await backend.scan({ input: chunk, exclusive: options.exclusive ?? false, initial: carry }, runOptions);
    if (chunk.length > 0) {
      const last = data[chunk.length - 1]!;
      const next = options.exclusive ? last + chunk[chunk.length - 1]! : last;
      carry = dtype === 'u32' ? next >>> 0 : dtype === 'i32' ? next | 0 : next;
    }
    index++;
    yield data;
  }
}
