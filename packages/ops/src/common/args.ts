import { assertObject, checkTypedArray, describeValue, InvalidArgumentError, typedArrayTag } from '@kernelkit/core';

/**
 * Reads each known field of the caller's argument object exactly once, into a plain object the
 * validator checks and copies from: a getter or Proxy that answers differently on a second read
 * cannot change what the kernels see. Own keys that are not known are refused by name, so a
 * misspelt option (`Relu: true`) is not silently ignored.
 */
export function readArgs<K extends string>(args: unknown, name: string, known: readonly K[]): { readonly [P in K]: unknown } {
  assertObject(args, name);
  if (typedArrayTag(args) !== undefined) throw new InvalidArgumentError(name, `expected an object, got ${describeValue(args)}`);
  for (const key of Object.keys(args)) {
    if ((known as readonly string[]).includes(key)) continue;
    const near = known.find((k) => k.toLowerCase() === key.toLowerCase());
    const parameter = name === 'args' ? key : `${name}.${key}`;
    throw new InvalidArgumentError(parameter, `unknown argument${near === undefined ? '' : ` (did you mean ${near}?)`}; expected ${known.join(', ')}`);
  }
  const got = {} as { [P in K]: unknown };
  for (const key of known) got[key] = args[key];
  return got;
}

/**
 * An array's elements read once each into a Float64Array of `length` (the caller's own typed
 * arrays are copied too: the kernels then read only what was checked). Each element must be a
 * finite number; strings, BigInts and holes are refused naming the element.
 */
export function readFiniteArray(value: unknown, name: string, length: number | undefined): Float64Array {
  const tag = typedArrayTag(value);
  if (tag !== undefined && tag !== 'Float64Array') throw new InvalidArgumentError(name, `expected a Float64Array or an array of numbers, got ${describeValue(value)}`);
  if (tag === undefined && !Array.isArray(value)) throw new InvalidArgumentError(name, `expected a Float64Array or an array of numbers, got ${describeValue(value)}`);
  return tag === undefined ? fromArray(value as readonly unknown[], name, length) : fromFloat64(value as Float64Array, name, length);
}

function fromFloat64(value: unknown, name: string, length: number | undefined): Float64Array {
  const view = checkTypedArray(value, name, [Float64Array]);
  if (length !== undefined && view.length !== length) throw new InvalidArgumentError(name, `expected length ${length}, got ${view.length}`);
  const out = view.slice();
  for (let i = 0; i < out.length; i++) {
    if (!Number.isFinite(out[i])) throw new InvalidArgumentError(`${name}[${i}]`, `expected a finite number, got ${describeValue(out[i])}`);
  }
  return out;
}

function fromArray(value: readonly unknown[], name: string, length: number | undefined): Float64Array {
  const n = value.length;
  if (length !== undefined && n !== length) throw new InvalidArgumentError(name, `expected length ${length}, got ${n}`);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError(name, `expected an array, got length ${describeValue(n)}`);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = value[i];
    if (v === undefined && !Object.hasOwn(value, i)) throw new InvalidArgumentError(`${name}[${i}]`, 'missing (a hole in a sparse array); expected a finite number');
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new InvalidArgumentError(`${name}[${i}]`, `expected a finite number, got ${describeValue(v)}`);
    out[i] = v;
  }
  return out;
}
