import { Buffer } from 'node:buffer';

/** Copies from this size on take Node's native copy when either side is shared memory. */
export const NATIVE_COPY_MIN_BYTES = 64 << 10;

/** The typed arrays `copyInto` copies between. */
export interface CopyView {
  readonly buffer: ArrayBufferLike;
  readonly byteOffset: number;
  readonly byteLength: number;
  readonly BYTES_PER_ELEMENT: number;
  readonly constructor: unknown;
  set(source: ArrayLike<number>, offset?: number): void;
}

/**
 * `target.set(source, offset)`, for two arrays of the same type as one memcpy also
 * where either side is a SharedArrayBuffer. There V8's `set` copies word by word (so no
 * reader sees a torn word), at about half of memcpy's speed on large copies; Buffer#fill with a
 * value exactly as long as the range it fills is one memcpy in Node's C++. For the copies the
 * backends make into and out of memory no other thread touches meanwhile.
 */
export function copyInto(target: CopyView, source: CopyView, offset = 0): void {
  const bytes = source.byteLength;
  const shared = isShared(target.buffer) || isShared(source.buffer);
  if (!shared || bytes < NATIVE_COPY_MIN_BYTES || target.buffer === source.buffer || target.constructor !== source.constructor) {
    target.set(source as unknown as ArrayLike<number>, offset);
    return;
  }
  const at = offset * target.BYTES_PER_ELEMENT;
  if (!Number.isInteger(offset) || offset < 0 || at + bytes > target.byteLength) throw new RangeError('offset is out of bounds');
  Buffer.from(target.buffer, target.byteOffset + at, bytes).fill(new Uint8Array(source.buffer, source.byteOffset, bytes));
}

function isShared(buffer: ArrayBufferLike): boolean {
  return typeof SharedArrayBuffer !== 'undefined' && buffer instanceof SharedArrayBuffer;
}
