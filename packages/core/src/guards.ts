import { InvalidArgumentError } from './errors.js';

/** Option guards in the Piscina style: each names the parameter it rejects. */

export type TypedArray =
  | Float32Array
  | Float64Array
  | Int32Array
  | Uint32Array;

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (ArrayBuffer.isView(value)) return `${value.constructor.name}(${(value as TypedArray).length})`;
  if (Array.isArray(value)) return `Array(${value.length})`;
  return typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value;
}

export function assertObject(value: unknown, name: string): asserts value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(name, `expected an object, got ${describeValue(value)}`);
  }
}

export function assertInteger(value: unknown, name: string, min: number, max = Number.MAX_SAFE_INTEGER): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new InvalidArgumentError(name, `expected an integer, got ${describeValue(value)}`);
  }
  if (value < min) throw new InvalidArgumentError(name, `must be >= ${min}, got ${value}`);
  if (value > max) throw new InvalidArgumentError(name, `must be <= ${max}, got ${value}`);
}

export function assertFiniteNumber(value: unknown, name: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidArgumentError(name, `expected a finite number, got ${describeValue(value)}`);
  }
}

export function assertBoolean(value: unknown, name: string): asserts value is boolean {
  if (typeof value !== 'boolean') throw new InvalidArgumentError(name, `expected a boolean, got ${describeValue(value)}`);
}

export function assertOneOf<T extends string>(value: unknown, name: string, allowed: readonly T[]): asserts value is T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(name, `expected one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}, got ${describeValue(value)}`);
  }
}

type TypedArrayCtor = Float32ArrayConstructor | Float64ArrayConstructor | Int32ArrayConstructor | Uint32ArrayConstructor;

/**
 * Node 20 has no ArrayBuffer#detached, and a detached buffer there looks like an empty one
 * (byteLength 0, views of length 0); constructing even an empty view on it throws, which an
 * ordinary empty buffer allows.
 */
export function isDetachedBuffer(buffer: ArrayBufferLike): boolean {
  const b = buffer as ArrayBufferLike & { detached?: boolean };
  if (b.detached !== undefined) return b.detached;
  if (b.byteLength !== 0 || (typeof SharedArrayBuffer !== 'undefined' && b instanceof SharedArrayBuffer)) return false;
  try {
    new Uint8Array(b, 0, 0);
    return false;
  } catch {
    return true;
  }
}

/** Checks the element type and, when `length` is given, the exact length. */
export function assertTypedArray<C extends TypedArrayCtor>(
  value: unknown,
  name: string,
  ctors: readonly C[],
  length?: number,
  lengthHint?: string,
): asserts value is InstanceType<C> {
  if (!ArrayBuffer.isView(value) || !ctors.some((c) => value instanceof c)) {
    throw new InvalidArgumentError(name, `expected ${ctors.map((c) => c.name).join(' or ')}, got ${describeValue(value)}`);
  }
  if (isDetachedBuffer(value.buffer)) throw new InvalidArgumentError(name, 'its ArrayBuffer is detached (was it transferred?)');
  if (length !== undefined && (value as TypedArray).length !== length) {
    throw new InvalidArgumentError(name, `expected length ${length}${lengthHint ? ` (${lengthHint})` : ''}, got ${(value as TypedArray).length}`);
  }
}

export function assertFunction(value: unknown, name: string): asserts value is (...args: never[]) => unknown {
  if (typeof value !== 'function') throw new InvalidArgumentError(name, `expected a function, got ${describeValue(value)}`);
}

export function assertAbortSignal(value: unknown, name: string): asserts value is AbortSignal {
  if (!(value instanceof AbortSignal)) throw new InvalidArgumentError(name, `expected an AbortSignal, got ${describeValue(value)}`);
}

/** Product of sizes that must stay below 2^53 (and below `max` when given). */
export function checkedProduct(name: string, sizes: readonly number[], max = Number.MAX_SAFE_INTEGER): number {
  let p = 1;
  for (const s of sizes) {
    p *= s;
    if (p > max) throw new InvalidArgumentError(name, `total size ${sizes.join('×')} exceeds ${max}`);
  }
  return p;
}
