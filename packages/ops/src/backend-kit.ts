import {
  AbortError,
  assertAbortSignal,
  assertBoolean,
  assertFunction,
  assertObject,
  assertOneOf,
  describeValue,
  DisposedError,
  InvalidArgumentError,
  makeTiming,
  now,
  throwIfAborted,
  raceAbort,
} from '@kernelkit/core';
import type { Backend, BackendInfo, BackendName, OpData, OpName, OpProblem, OutputKind, Progress, Result, RunOptions } from './backend.js';
import { OP_NAMES } from './backend.js';
import { OPS, type DeviceForm } from './descriptors.js';
import { DeviceArrayRegistry, isDeviceArray, type DeviceArray, type DeviceArraySource, type DeviceData } from './device-array.js';

export interface OpContext<D> {
  readonly variant: string;
  /** The caller's validated output buffer, if any: write the result here. */
  readonly out: D | undefined;
  readonly signal: AbortSignal | undefined;
  readonly timing: boolean;
  readonly onProgress: ((p: Progress) => void) | undefined;
  /**
   * `'device'` when the caller asked for a DeviceArray: a backend with device memory returns
   * one made with `deviceArray`; any runner may return a host array, which the kit wraps.
   */
  readonly output: OutputKind;
  /** Makes a handle this backend instance owns; the backend's dispose disposes it. */
  readonly deviceArray: <T extends DeviceData>(source: DeviceArraySource<T>) => DeviceArray<T>;
}

/** The DeviceArray form of an op's output type (none for gridSearch). */
export type DeviceOf<D> = D extends DeviceData ? DeviceArray<D> : never;

export interface OpOutput<D> {
  readonly data: D | DeviceOf<D>;
  readonly kernelMs?: number | undefined;
  readonly uploadMs?: number | undefined;
  readonly readbackMs?: number | undefined;
  readonly notes?: readonly string[] | undefined;
}

export type OpRunner<O extends OpName> = (p: OpProblem<O>, ctx: OpContext<OpData<O>>) => Promise<OpOutput<OpData<O>>> | OpOutput<OpData<O>>;

export interface OpImplementation<O extends OpName> {
  /** Insertion order is the order `variants(op)` reports; `defaultVariant` comes first. */
  readonly variants: Readonly<Record<string, OpRunner<O>>>;
  readonly defaultVariant: string;
  /** Backend-specific refusals (e.g. f64 on a GPU) as `UnsupportedError`, before any work. */
  readonly check?: (p: OpProblem<O>, variant: string) => void;
}

/** The problem as a resident runner gets it: `input` may be one of this backend's own DeviceArrays. */
export type ResidentProblem<O extends OpName> = DeviceForm<OpProblem<O>>;

export type ResidentRunner<O extends OpName> = (p: ResidentProblem<O>, ctx: OpContext<OpData<O>>) => Promise<OpOutput<OpData<O>>> | OpOutput<OpData<O>>;

/**
 * An op whose runners take this backend's own device-resident DeviceArrays as they are (no
 * read-back). Any other handle (another instance's, another backend's, or host-held) still
 * arrives as a host array.
 */
export interface ResidentOpImplementation<O extends OpName> {
  readonly residentInputs: true;
  readonly variants: Readonly<Record<string, ResidentRunner<O>>>;
  readonly defaultVariant: string;
  readonly check?: (p: ResidentProblem<O>, variant: string) => void;
}

export type OpTable = { readonly [O in OpName]: OpImplementation<O> | ResidentOpImplementation<O> };

/** Parameters per op that accept a DeviceArray. */
const DEVICE_INPUTS: { readonly [O in OpName]: readonly string[] } = { conv2d: ['input'], stencil3d: ['input'], scan: ['input'], gridSearch: [], convLayer: ['input'] };

export interface BackendSpec {
  readonly name: BackendName;
  readonly info: BackendInfo;
  readonly ops: OpTable;
  /** Releases what the backend owns; called once. */
  readonly release: () => Promise<void> | void;
  /**
   * Called with a runner's output once it succeeded, before anything else happens to it: a
   * backend whose results reuse memory (ResultArrays in @kernelkit/core) lets it go to the caller here.
   */
  readonly handOver?: (data: unknown) => void;
  /** Backend.warmUp: left out where the backend has nothing to warm. */
  readonly warmUp?: () => Promise<void>;
}

/** The caller's options, each read once and checked, defaults applied. */
interface CheckedOptions {
  readonly variant: string;
  readonly output: OutputKind;
  readonly timing: boolean;
  readonly signal: AbortSignal | undefined;
  readonly out: unknown;
  readonly onProgress: ((p: Progress) => void) | undefined;
}

function checkOptions(op: OpName, impl: { readonly variants: object; readonly defaultVariant: string }, options: RunOptions<unknown> | undefined): CheckedOptions {
  if (options === undefined) return { variant: impl.defaultVariant, output: 'array', timing: false, signal: undefined, out: undefined, onProgress: undefined };
  assertObject(options, 'options');
  const { output = 'array', timing = false, signal, out, onProgress, variant = impl.defaultVariant } = options;
  assertOneOf(output, 'options.output', ['array', 'device'] as const);
  if (output === 'device' && DEVICE_INPUTS[op].length === 0) throw new InvalidArgumentError('options.output', `${op} returns no array; 'device' is for conv2d, stencil3d, scan and convLayer`);
  if (output === 'device' && out !== undefined) throw new InvalidArgumentError('options.out', "cannot be combined with output: 'device' (the result stays with the backend)");
  assertBoolean(timing, 'options.timing');
  if (signal !== undefined) assertAbortSignal(signal, 'options.signal');
  if (onProgress !== undefined) assertFunction(onProgress, 'options.onProgress');
  if (typeof variant !== 'string' || !Object.hasOwn(impl.variants, variant)) {
    throw new InvalidArgumentError('options.variant', `unknown variant ${describeValue(variant)} for ${op}; this backend has ${Object.keys(impl.variants).join(', ')}`);
  }
  return { variant, output, timing, signal, out, onProgress: onProgress as ((p: Progress) => void) | undefined };
}

interface TakenInputs<P> {
  /** The resolved problem now when nothing has to be read back (the runner then starts within the call), else a promise of it. */
  readonly ready: { readonly problem: P; readonly notes: readonly string[] } | Promise<{ readonly problem: P; readonly notes: readonly string[] }>;
  /** Unpins the handles kept as they are; call when the runner has settled. */
  readonly done: () => void;
}

/**
 * Runs synchronously inside the call, so a handle disposed right after the call was made is
 * still what the call reads: this instance's device handles the runner takes as they are
 * (`resident`) are pinned; its host-held handles are replaced by their array (no copy); every
 * other handle's read-back starts here, and a note says so.
 */
function takeInputs<P>(op: OpName, problem: P, registry: DeviceArrayRegistry, resident: boolean, backendName: BackendName, signal: AbortSignal | undefined): TakenInputs<P> {
  const unpins: (() => void)[] = [];
  const reads: Promise<readonly [string, DeviceData]>[] = [];
  const notes: string[] = [];
  let p = problem;
  for (const key of DEVICE_INPUTS[op]) {
    const v = (p as Record<string, unknown>)[key];
    if (!isDeviceArray(v)) continue;
    const own = registry.owns(v);
    if (own && v.location === 'device' && resident) {
      unpins.push(registry.pin(v));
      continue;
    }
    const held = registry.hostArray(v);
    if (held !== undefined) {
      p = { ...p, [key]: held };
      continue;
    }
    reads.push(
      raceAbort(v.read(), signal).then(
        (data) => [key, data] as const,
        (e: unknown) => {
          // Disposed between validation and the read: still the caller's argument.
          throw !(e instanceof AbortError) && v.disposed ? new InvalidArgumentError(key, `this ${v.backend} DeviceArray was disposed before the call read it`, { cause: e }) : e;
        },
      ),
    );
    const whose = own ? `this backend (${backendName} ${op} takes host arrays)` : v.backend === backendName ? `another ${v.backend} backend` : `the ${v.backend} backend`;
    notes.push(v.location === 'device' ? `${key} read back from ${v.backend} device memory (a DeviceArray of ${whose})` : `${key} copied from a host-held DeviceArray of ${whose}`);
  }
  const done = (): void => {
    for (const u of unpins) u();
  };
  const base = p;
  if (reads.length === 0) return { ready: { problem: base, notes }, done };
  const ready = Promise.all(reads).then((got) => ({ problem: got.reduce((q, [key, data]) => ({ ...q, [key]: data }), base), notes }));
  return { ready, done };
}

/**
 * Builds a `Backend` from per-op runners. The shared part of every backend lives here: the
 * disposed check, option guards, validation (before any work), `out` checks, DeviceArray inputs
 * and outputs, abort and timing.
 */
export function createBackend(spec: BackendSpec): Backend {
  let disposed = false;
  let releasing: Promise<void> | undefined;
  // Calls made before dispose(): it waits for them to settle before releasing what they use.
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(call: Promise<T>): Promise<T> => {
    inFlight.add(call);
    const settled = (): void => {
      inFlight.delete(call);
    };
    call.then(settled, settled);
    return call;
  };
  const call = <O extends OpName>(op: O, args: unknown, options: RunOptions<unknown> | undefined): Promise<never> => track(run(op, args, options)) as Promise<never>;
  const registry = new DeviceArrayRegistry();
  const deviceArray = <T extends DeviceData>(source: DeviceArraySource<T>): DeviceArray<T> => registry.make(source);

  async function run<O extends OpName>(op: O, args: unknown, options: RunOptions<unknown> | undefined): Promise<Result<OpData<O> | DeviceOf<OpData<O>>>> {
    if (disposed) throw new DisposedError(spec.name);
    const impl = spec.ops[op] as unknown as OpImplementation<O> | ResidentOpImplementation<O>;
    const opts = checkOptions(op, impl, options);
    const { variant, output, signal } = opts;
    const desc = OPS[op];
    const validated = desc.validate(args as never) as DeviceForm<OpProblem<O>>;
    // `out` is the caller's object (handed back as `data`); `outView` the checked view of its memory the runner writes.
    const out = opts.out;
    let outView: OpData<O> | undefined;
    if (out !== undefined) {
      if (desc.checkOut === undefined) throw new InvalidArgumentError('options.out', `${op} has no fixed-size output; omit it`);
      outView = desc.checkOut(validated as never, out);
    }
    // Validation allocates nothing proportional to the problem; an aborted call stops before anything that does.
    throwIfAborted(signal);
    const resident = 'residentInputs' in impl && impl.residentInputs;
    const taken = takeInputs(op, validated, registry, resident, spec.name, signal);
    let res: OpOutput<OpData<O>>;
    let inputNotes: readonly string[];
    let t0: number;
    try {
      // No await unless something is read back: a call made before a dispose still runs, as before handles existed.
      const ready = taken.ready instanceof Promise ? await taken.ready : taken.ready;
      inputNotes = ready.notes;
      const problem = ready.problem;
      impl.check?.(problem as never, variant);
      throwIfAborted(signal);
      const runner = impl.variants[variant]! as OpRunner<O>;
      t0 = now();
      res = await runner(problem as OpProblem<O>, {
        variant,
        // With a signal, the runner writes a buffer of its own and `out` is filled only after
        // the last abort check: an abort that lands while the runner finishes must leave the
        // caller's `out` as it was (written only on success), at the cost of one copy.
        out: signal === undefined ? outView : undefined,
        signal,
        timing: opts.timing,
        onProgress: opts.onProgress,
        output,
        deviceArray,
      });
    } finally {
      taken.done();
    }
    spec.handOver?.(res.data);
    let data: OpData<O> | DeviceOf<OpData<O>> = res.data;
    if (output === 'device' && !isDeviceArray(data)) data = registry.wrapHost(spec.name, data as DeviceData) as DeviceOf<OpData<O>>;
    else if (output === 'array' && isDeviceArray(data)) {
      // A runner that made a handle nobody asked for: hand back its contents, free it.
      const h = data;
      try {
        data = (await h.read()) as OpData<O>;
      } finally {
        h.dispose();
      }
    }
    const totalMs = now() - t0;
    if (signal?.aborted || (disposed && isDeviceArray(data))) {
      if (isDeviceArray(data)) data.dispose();
      if (signal?.aborted) throw new AbortError(signal.reason);
      throw new DisposedError(spec.name);
    }
    if (outView !== undefined) {
      if (data !== outView) (outView as { set(a: ArrayLike<number>): void }).set(data as unknown as ArrayLike<number>);
      data = out as OpData<O>;
    }
    const result: { -readonly [K in keyof Result<OpData<O>>]: Result<OpData<O> | DeviceOf<OpData<O>>>[K] } = { op, backend: spec.name, variant, data };
    if (opts.timing) {
      result.timing = makeTiming({ totalMs, kernelMs: res.kernelMs, uploadMs: res.uploadMs, readbackMs: res.readbackMs });
    }
    const notes = [...inputNotes, ...(res.notes ?? [])];
    if (notes.length > 0) result.notes = notes;
    return result;
  }

  const backend: Backend = {
    name: spec.name,
    info: spec.info,
    get disposed() {
      return disposed;
    },
    conv2d: (a, o) => call('conv2d', a, o),
    stencil3d: (a, o) => call('stencil3d', a, o),
    scan: (a, o) => call('scan', a, o),
    gridSearch: (a, o) => call('gridSearch', a, o),
    convLayer: (a, o) => call('convLayer', a, o),
    variants(op: OpName) {
      if (!(OP_NAMES as readonly string[]).includes(op)) throw new InvalidArgumentError('op', `unknown op ${describeValue(op)}; expected one of ${OP_NAMES.join(', ')}`);
      const impl = spec.ops[op] as { readonly variants: object; readonly defaultVariant: string };
      const names = Object.keys(impl.variants);
      return [impl.defaultVariant, ...names.filter((n) => n !== impl.defaultVariant)];
    },
    ...(spec.warmUp === undefined
      ? {}
      : {
          warmUp: () => {
            if (disposed) return Promise.reject(new DisposedError(spec.name));
            return track(spec.warmUp!());
          },
        }),
    dispose() {
      disposed = true;
      releasing ??= (async () => {
        // The rule every backend shares: calls already made finish (see Backend.dispose).
        await Promise.allSettled(inFlight);
        // Handles first: their memory goes back before the backend releases its device.
        registry.close();
        await spec.release();
      })();
      return releasing;
    },
    [Symbol.asyncDispose]() {
      return backend.dispose();
    },
  };
  return backend;
}
