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
  const tag = typedArrayTag(value);
  if (tag !== undefined) return `${tag}(${typedArrayLength(value as TypedArray)})`;
  if (typeof value === 'bigint') return `${value}n (a BigInt)`;
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

export type TypedArrayCtor = Float32ArrayConstructor | Float64ArrayConstructor | Int32ArrayConstructor | Uint32ArrayConstructor;

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

// The %TypedArray%.prototype getters, taken once: they read a view's internal slots, so an own
// `length` property, a subclass, a Proxy or another realm's constructor cannot change what they say.
const TYPED_ARRAY_PROTO = Object.getPrototypeOf(Uint8Array.prototype) as object;
const intrinsicGetter = (key: PropertyKey): ((this: unknown) => unknown) => Object.getOwnPropertyDescriptor(TYPED_ARRAY_PROTO, key)!.get! as (this: unknown) => unknown;
const TAG_GETTER = intrinsicGetter(Symbol.toStringTag);
const LENGTH_GETTER = intrinsicGetter('length');
const BUFFER_GETTER = intrinsicGetter('buffer');
const BYTE_OFFSET_GETTER = intrinsicGetter('byteOffset');

/** The element type a typed array really has (`'Float32Array'`…), from any realm or subclass; undefined for anything else. */
export function typedArrayTag(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null ? (Reflect.apply(TAG_GETTER, value, []) as string | undefined) : undefined;
}

/** A typed array's element count from its internal slot (not an own or overridden `length`). */
export function typedArrayLength(value: TypedArray): number {
  return Reflect.apply(LENGTH_GETTER, value, []) as number;
}

/**
 * Checks the element type and, when `length` is given, the exact length, and returns a plain
 * view of this realm over the same memory: a subclass or another realm's array of an accepted
 * type passes as its base type, and what the kernels later read cannot be changed by the
 * caller's object (own `length`, overridden methods).
 */
export function checkTypedArray<C extends TypedArrayCtor>(value: unknown, name: string, ctors: readonly C[], length?: number, lengthHint?: string): InstanceType<C> {
  const tag = typedArrayTag(value);
  const ctor = ctors.find((c) => c.name === tag);
  if (ctor === undefined) throw new InvalidArgumentError(name, `expected ${ctors.map((c) => c.name).join(' or ')}, got ${describeValue(value)}`);
  const buffer = Reflect.apply(BUFFER_GETTER, value, []) as ArrayBufferLike;
  if (isDetachedBuffer(buffer)) throw new InvalidArgumentError(name, 'its ArrayBuffer is detached (was it transferred?)');
  const n = typedArrayLength(value as TypedArray);
  if (length !== undefined && n !== length) {
    throw new InvalidArgumentError(name, `expected length ${length}${lengthHint ? ` (${lengthHint})` : ''}, got ${n}`);
  }
  return new ctor(buffer as ArrayBuffer, Reflect.apply(BYTE_OFFSET_GETTER, value, []) as number, n) as InstanceType<C>;
}

/** `checkTypedArray` for callers that keep their own reference. */
export function assertTypedArray<C extends TypedArrayCtor>(
  value: unknown,
  name: string,
  ctors: readonly C[],
  length?: number,
  lengthHint?: string,
): asserts value is InstanceType<C> {
  checkTypedArray(value, name, ctors, length, lengthHint);
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
