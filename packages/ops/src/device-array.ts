/**
 * GPU-resident chaining, after onnxruntime-web's `preferredOutputLocation: 'gpu-buffer'`:
 * `output: 'device'` makes a call return a `DeviceArray` (a handle to the result where the
 * backend keeps it) instead of a host array, and array inputs accept such handles, so one op's
 * output feeds the next without a trip through host memory. Ownership is explicit: the caller
 * disposes the handle (or the backend's dispose does); `read()` copies it back to the host.
 */
import { checkTypedArray, typedArrayTag, describeValue, DisposedError, InvalidArgumentError, type TypedArrayCtor } from '@kernelkit/core';
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

/** From the array's internal type (a subclass or another realm's array has its base type's dtype). */
export function dtypeOf(a: DeviceData): DeviceDtype {
  return CTOR_DTYPE[typedArrayTag(a) ?? ''] ?? 'f32';
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

  /** A brand check: an object merely inheriting from this class (or claiming to be a handle) is not one. */
  static made(value: object): value is Handle<DeviceData> {
    return #pins in value;
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
    return this.owns(h) && Handle.made(h) ? h.pin() : () => {};
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
 * A DeviceArray the caller made (or another copy of this package did): its fields are read once
 * here, and what its `read()` returns is checked against them (element type, length) and handed
 * on as a plain view, so a handle that lies about its contents is refused naming the parameter.
 */
class ForeignDeviceArray<T extends DeviceData> implements DeviceArray<T> {
  readonly kind = 'device-array' as const;
  #disposed = false;
  constructor(
    readonly backend: BackendName,
    readonly dtype: DeviceDtype,
    readonly length: number,
    readonly location: 'device' | 'host',
    private readonly parameter: string,
    private readonly source: object,
    private readonly readFn: () => unknown,
  ) {}

  get disposed(): boolean {
    return this.#disposed;
  }

  async read(): Promise<T> {
    const data: unknown = await Reflect.apply(this.readFn, this.source, []);
    try {
      return checkTypedArray(data, this.parameter, [ctorOf(this.dtype) as TypedArrayCtor], this.length) as T;
    } catch (e) {
      const why = e instanceof InvalidArgumentError ? e.message.slice(this.parameter.length + 2) : String(e);
      throw new InvalidArgumentError(this.parameter, `this DeviceArray (${this.dtype}×${this.length}) read back something else: ${why}`);
    }
  }

  dispose(): void {
    this.#disposed = true;
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

const DTYPES: readonly string[] = ['f32', 'f64', 'u32', 'i32'];

/** Each field of a handle not made by this package, read once and checked. */
function adoptForeign(value: object, name: string): ForeignDeviceArray<DeviceData> {
  const h = value as Record<string, unknown>;
  const { backend, dtype, length, location, disposed, read } = h;
  if (disposed !== false) throw new InvalidArgumentError(name, disposed === true ? 'this DeviceArray has been disposed' : `a DeviceArray's disposed must be a boolean, got ${describeValue(disposed)}`);
  if (typeof dtype !== 'string' || !DTYPES.includes(dtype)) throw new InvalidArgumentError(name, `a DeviceArray's dtype must be one of ${DTYPES.join(', ')}, got ${describeValue(dtype)}`);
  if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) throw new InvalidArgumentError(name, `a DeviceArray's length must be an integer >= 0, got ${describeValue(length)}`);
  if (typeof read !== 'function') throw new InvalidArgumentError(name, `a DeviceArray's read must be a function, got ${describeValue(read)}`);
  const where = location === 'host' ? 'host' : 'device';
  return new ForeignDeviceArray(typeof backend === 'string' ? (backend as BackendName) : ('cpu' as BackendName), dtype as DeviceDtype, length, where, name, value, read as () => unknown);
}

/**
 * `checkTypedArray` that also takes a DeviceArray standing for such an array: same parameter
 * name, same length message; a disposed handle is refused naming the parameter. Returns what
 * the problem keeps: a plain view of the array, a handle this package made, or a checked
 * stand-in for any other handle (its `read()` result is validated when the call reads it).
 */
export function checkArrayOrDevice<T extends DeviceData>(
  value: unknown,
  name: string,
  ctors: readonly (Float32ArrayConstructor | Float64ArrayConstructor | Uint32ArrayConstructor | Int32ArrayConstructor)[],
  length?: number,
  lengthHint?: string,
): T | DeviceArray<T> {
  if (!isDeviceArray(value)) return checkTypedArray(value, name, ctors as readonly TypedArrayCtor[], length, lengthHint) as unknown as T;
  const h: DeviceArray = Handle.made(value) ? value : adoptForeign(value, name);
  if (h.disposed) throw new InvalidArgumentError(name, `this ${h.backend} DeviceArray has been disposed`);
  if (!ctors.some((c) => CTOR_DTYPE[c.name] === h.dtype)) {
    throw new InvalidArgumentError(name, `expected ${ctors.map((c) => c.name).join(' or ')}, got a DeviceArray of ${h.dtype} (${ctorOf(h.dtype).name})`);
  }
  if (length !== undefined && h.length !== length) {
    throw new InvalidArgumentError(name, `expected length ${length}${lengthHint ? ` (${lengthHint})` : ''}, got ${h.length}`);
  }
  return h as DeviceArray<T>;
}

/** `checkArrayOrDevice` for callers that keep their own reference. */
export function assertArrayOrDevice(
  value: unknown,
  name: string,
  ctors: readonly (Float32ArrayConstructor | Float64ArrayConstructor | Uint32ArrayConstructor | Int32ArrayConstructor)[],
  length?: number,
  lengthHint?: string,
): void {
  checkArrayOrDevice(value, name, ctors, length, lengthHint);
}


/** The element type of an array or handle (validators use it where they used the array's constructor). */
export const dtypeOfInput = (v: DeviceData | DeviceArray): DeviceDtype => (isDeviceArray(v) ? v.dtype : dtypeOf(v));
