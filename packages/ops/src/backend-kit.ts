import {
  AbortError,
  assertAbortSignal,
  assertBoolean,
  assertFunction,
  assertObject,
  describeValue,
  DisposedError,
  InvalidArgumentError,
  makeTiming,
  now,
  throwIfAborted,
} from '@kernelkit/core';
import type { Backend, BackendInfo, BackendName, OpData, OpName, OpProblem, Progress, Result, RunOptions } from './backend.js';
import { OP_NAMES } from './backend.js';
import { OPS } from './descriptors.js';

export interface OpContext<D> {
  readonly variant: string;
  /** The caller's validated output buffer, if any: write the result here. */
  readonly out: D | undefined;
  readonly signal: AbortSignal | undefined;
  readonly timing: boolean;
  readonly onProgress: ((p: Progress) => void) | undefined;
}

export interface OpOutput<D> {
  readonly data: D;
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

export type OpTable = { readonly [O in OpName]: OpImplementation<O> };

export interface BackendSpec {
  readonly name: BackendName;
  readonly info: BackendInfo;
  readonly ops: OpTable;
  /** Releases what the backend owns; called once. */
  readonly release: () => Promise<void> | void;
}

function checkOptions(op: OpName, impl: OpImplementation<OpName>, options: RunOptions<unknown> | undefined): string {
  if (options === undefined) return impl.defaultVariant;
  assertObject(options, 'options');
  if (options.timing !== undefined) assertBoolean(options.timing, 'options.timing');
  if (options.signal !== undefined) assertAbortSignal(options.signal, 'options.signal');
  if (options.onProgress !== undefined) assertFunction(options.onProgress, 'options.onProgress');
  const variant = options.variant ?? impl.defaultVariant;
  if (typeof variant !== 'string' || !Object.hasOwn(impl.variants, variant)) {
    throw new InvalidArgumentError('options.variant', `unknown variant ${describeValue(variant)} for ${op}; this backend has ${Object.keys(impl.variants).join(', ')}`);
  }
  return variant;
}

/**
 * Builds a `Backend` from per-op runners. The shared part of every backend lives here: the
 * disposed check, option guards, validation (before any work), `out` checks, abort and timing.
 */
export function createBackend(spec: BackendSpec): Backend {
  let disposed = false;
  let releasing: Promise<void> | undefined;

  async function run<O extends OpName>(op: O, args: unknown, options: RunOptions<unknown> | undefined): Promise<Result<OpData<O>>> {
    if (disposed) throw new DisposedError(spec.name);
    const impl = spec.ops[op] as unknown as OpImplementation<O>;
    const variant = checkOptions(op, impl as unknown as OpImplementation<OpName>, options);
    const desc = OPS[op];
    const problem = desc.validate(args as never) as OpProblem<O>;
    const out = options?.out;
    if (out !== undefined) {
      if (desc.checkOut === undefined) throw new InvalidArgumentError('options.out', `${op} has no fixed-size output; omit it`);
      desc.checkOut(problem as never, out);
    }
    impl.check?.(problem, variant);
    throwIfAborted(options?.signal);
    const runner = impl.variants[variant]!;
    const t0 = now();
    const res = await runner(problem, {
      variant,
      out: out as OpData<O> | undefined,
      signal: options?.signal,
      timing: options?.timing ?? false,
      onProgress: options?.onProgress,
    });
    const totalMs = now() - t0;
    if (options?.signal?.aborted) throw new AbortError(options.signal.reason);
    const result: { -readonly [K in keyof Result<OpData<O>>]: Result<OpData<O>>[K] } = { op, backend: spec.name, variant, data: res.data };
    if (options?.timing) {
      result.timing = makeTiming({ totalMs, kernelMs: res.kernelMs, uploadMs: res.uploadMs, readbackMs: res.readbackMs });
    }
    if (res.notes !== undefined && res.notes.length > 0) result.notes = res.notes;
    return result;
  }

  const backend: Backend = {
    name: spec.name,
    info: spec.info,
    get disposed() {
      return disposed;
    },
    conv2d: (a, o) => run('conv2d', a, o),
    stencil3d: (a, o) => run('stencil3d', a, o) as never,
    scan: (a, o) => run('scan', a, o) as never,
    gridSearch: (a, o) => run('gridSearch', a, o),
    convLayer: (a, o) => run('convLayer', a, o),
    variants(op: OpName) {
      if (!(OP_NAMES as readonly string[]).includes(op)) throw new InvalidArgumentError('op', `unknown op ${describeValue(op)}; expected one of ${OP_NAMES.join(', ')}`);
      const impl = spec.ops[op] as OpImplementation<OpName>;
      const names = Object.keys(impl.variants);
      return [impl.defaultVariant, ...names.filter((n) => n !== impl.defaultVariant)];
    },
    dispose() {
      disposed = true;
      releasing ??= Promise.resolve().then(spec.release);
      return releasing;
    },
    [Symbol.asyncDispose]() {
      return backend.dispose();
    },
  };
  return backend;
}
