/**
 * GPU-resident chaining, after onnxruntime-web's `preferredOutputLocation: 'gpu-buffer'`:
 * `output: 'device'` makes a call return a `DeviceArray` (a handle to the result where the
 * backend keeps it) instead of a host array, and array inputs accept such handles, so one op's
 * output feeds the next without a trip through host memory. Ownership is explicit: the caller
 * disposes the handle (or the backend's dispose does); `read()` copies it back to the host.
 */
import { assertTypedArray, DisposedError, InvalidArgumentError } from '@kernelkit/core';
import type { BackendName } from './backend.js';

export type DeviceDtype = 'f32' | 'f64' | 'u32' | 'i32';
export type DeviceData = Float32Array | Float64Array | Uint32Array | Int32Array;

export interface DeviceArray<T extends DeviceData = DeviceData> extends Disposable {
  readonly kind: 'device-array';
  /** The kind of backend that made it (an instance of it owns the memory). */
  readonly backend: BackendName;
  readonly dtype: DeviceDtype;
  /** Elements, as the array it stands for. */
  readonly length: number;
  /** `'device'`: device memory (WebGPU); `'host'`: a host array held by a backend without device memory. */
  readonly location: 'device' | 'host';
  readonly disposed: boolean;
  /** A fresh host copy of the contents (each call its own array). Rejects with DisposedError once disposed. */
  read(): Promise<T>;
  /** Frees the memory. Safe to call twice; the backend's dispose disposes every live handle it made. */
  dispose(): void;
}

/** An array argument: the host array or a handle to one. */
export type MaybeDevice<T extends DeviceData> = T | DeviceArray<T>;

/** `A` with its `input` array also accepted as a DeviceArray. */
export type WithDeviceInput<A extends { readonly input: DeviceData }> = Omit<A, 'input'> & { readonly input: A['input'] | DeviceArray<A['input']> };

/** What a backend supplies to make a handle (through `OpContext.deviceArray`). */
export interface DeviceArraySource<T extends DeviceData> {
  readonly backend: BackendName;
  readonly dtype: DeviceDtype;
  readonly length: number;
  readonly location: 'device' | 'host';
  /** For `location: 'host'`: the array held (the kit hands it to this backend's own runners without a copy). */
  readonly host?: T;
  /** Copies the contents to a new host array; only called while the handle is live. */
  read(): Promise<T>;
  /** Frees the memory; called exactly once, on the first dispose. */
  release(): void;
}

const CTOR_DTYPE: Readonly<Record<string, DeviceDtype>> = { Float32Array: 'f32', Float64Array: 'f64', Uint32Array: 'u32', Int32Array: 'i32' };
const DTYPE_CTOR = { f32: Float32Array, f64: Float64Array, u32: Uint32Array, i32: Int32Array } as const;

export function dtypeOf(a: DeviceData): DeviceDtype {
  return CTOR_DTYPE[a.constructor.name] ?? (a instanceof Float64Array ? 'f64' : a instanceof Uint32Array ? 'u32' : a instanceof Int32Array ? 'i32' : 'f32');
}

export function ctorOf(dtype: DeviceDtype): (typeof DTYPE_CTOR)[DeviceDtype] {
  return DTYPE_CTOR[dtype];
}

/** Structural, so a handle from another copy of this package (or a caller's own) is still recognised. */
export function isDeviceArray(value: unknown): value is DeviceArray {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'device-array' &&
    typeof (value as { read?: unknown }).read === 'function' &&
    typeof (value as { dispose?: unknown }).dispose === 'function'
  );
}

const owners = new WeakMap<object, object>();
const hosts = new WeakMap<object, DeviceData>();

class Handle<T extends DeviceData> implements DeviceArray<T> {
  readonly kind = 'device-array' as const;
  readonly backend: BackendName;
  readonly dtype: DeviceDtype;
  readonly length: number;
  readonly location: 'device' | 'host';
  #source: DeviceArraySource<T> | undefined;
  #disposed = false;
  #byBackend = false;
  /** Calls using the memory right now; a dispose during one frees the memory after it. */
  #pins = 0;
  readonly #onDispose: (h: Handle<T>) => void;

  constructor(source: DeviceArraySource<T>, onDispose: (h: Handle<T>) => void) {
    this.backend = source.backend;
    this.dtype = source.dtype;
    this.length = source.length;
    this.location = source.location;
    this.#source = source;
    this.#onDispose = onDispose;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  read(): Promise<T> {
    const s = this.#source;
    if (this.#disposed || s === undefined) {
      const e = new DisposedError(this.backend);
      if (!this.#byBackend) e.message = `this ${this.backend} DeviceArray has been disposed; it cannot be read`;
      return Promise.reject(e);
    }
    return s.read();
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    hosts.delete(this);
    this.#onDispose(this);
    if (this.#pins === 0) this.#release();
  }

  /** The backend's dispose: reads after this say the backend is gone. */
  invalidate(): void {
    if (!this.#disposed) this.#byBackend = true;
    this.dispose();
  }

  /** Keeps the memory until the returned function is called, even across a dispose. */
  pin(): () => void {
    this.#pins++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.#pins === 0 && this.#disposed) this.#release();
    };
  }

  #release(): void {
    const s = this.#source;
    this.#source = undefined;
    s?.release();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  get [Symbol.toStringTag](): string {
    return `DeviceArray(${this.backend} ${this.dtype}×${this.length}${this.#disposed ? ', disposed' : ''})`;
  }
}

/**
 * The handles one backend instance made. `owner` identifies the instance: only its own handles
 * reach its runners unread. Used by the backend kit; backends make handles through `OpContext`.
 */
export class DeviceArrayRegistry {
  readonly owner: object = {};
  private readonly live = new Set<Handle<DeviceData>>();
  private closed = false;

  make<T extends DeviceData>(source: DeviceArraySource<T>): DeviceArray<T> {
    const h = new Handle<T>(source, (x) => this.live.delete(x as unknown as Handle<DeviceData>));
    owners.set(h, this.owner);
    if (source.host !== undefined) hosts.set(h, source.host);
    if (this.closed) h.invalidate();
    else this.live.add(h as unknown as Handle<DeviceData>);
    return h;
  }

  /** Wraps a host result (backends without device memory, or a runner that returned an array). */
  wrapHost<T extends DeviceData>(backend: BackendName, data: T): DeviceArray<T> {
    return this.make<T>({ backend, dtype: dtypeOf(data), length: data.length, location: 'host', host: data, read: async () => data.slice() as T, release: () => {} });
  }

  owns(h: DeviceArray): boolean {
    return owners.get(h) === this.owner;
  }

  /**
   * Keeps an own handle's memory alive until the returned function runs: a call that takes the
   * handle as an input pins it when it is made, so disposing the handle right after the call
   * (before its work is queued) is safe.
   */
  pin(h: DeviceArray): () => void {
    return this.owns(h) && h instanceof Handle ? h.pin() : () => {};
  }

  /** The array an own host handle holds (no copy), or undefined. */
  hostArray(h: DeviceArray): DeviceData | undefined {
    return this.owns(h) ? hosts.get(h) : undefined;
  }

  /** Disposes every live handle; later ones are born disposed. */
  close(): void {
    this.closed = true;
    for (const h of [...this.live]) h.invalidate();
  }

  get liveCount(): number {
    return this.live.size;
  }
}

/**
 * `assertTypedArray` that also takes a DeviceArray standing for such an array: same parameter
 * name, same length message; a disposed handle is refused naming the parameter.
 */
export function assertArrayOrDevice(
  value: unknown,
  name: string,
  ctors: readonly (Float32ArrayConstructor | Float64ArrayConstructor | Uint32ArrayConstructor | Int32ArrayConstructor)[],
  length?: number,
  lengthHint?: string,
): void {
  if (!isDeviceArray(value)) {
    assertTypedArray(value, name, ctors, length, lengthHint);
    return;
  }
  if (value.disposed) throw new InvalidArgumentError(name, `this ${value.backend} DeviceArray has been disposed`);
  if (!ctors.some((c) => CTOR_DTYPE[c.name] === value.dtype)) {
    throw new InvalidArgumentError(name, `expected ${ctors.map((c) => c.name).join(' or ')}, got a DeviceArray of ${value.dtype} (${ctorOf(value.dtype).name})`);
  }
  if (length !== undefined && value.length !== length) {
    throw new InvalidArgumentError(name, `expected length ${length}${lengthHint ? ` (${lengthHint})` : ''}, got ${value.length}`);
  }
}

/** The element type of an array or handle (validators use it where they used the array's constructor). */
export const dtypeOfInput = (v: DeviceData | DeviceArray): DeviceDtype => (isDeviceArray(v) ? v.dtype : dtypeOf(v));
