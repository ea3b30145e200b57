import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { BackendUnavailableError, BufferCache, InvalidArgumentError, KEEP_BYTES, ResultMemory, errorMessage } from '@kernelkit/core';
import type { Backend, OpName } from '@kernelkit/ops';
import { newSharedMemory, wasmSupport, type WasmSupport } from '@kernelkit/cpu';
import type { ModuleMemory, PoolWorkerData, Task } from './protocol.js';
import type { CallPhases } from './call.js';
import { newBufferId, pooledSharedBuffer } from './buffer-ids.js';

type WasmModule = WasmSupport['module'];

/**
 * The built worker. Resolved relative to the package root so that it is `dist/worker.js` both
 * from `dist/pool.js` and from `src/pool.ts` (vitest runs the sources; workers must be `.js`).
 */
export const WORKER_URL = new URL('../dist/worker.js', import.meta.url);

/** What the last call on a backend did; read by the tests through `src/testing.ts`. */
export interface CallStats {
  readonly op: string;
  /** True when the call ran on the calling thread (below `inlineBelow`). */
  readonly inline: boolean;
  /** Tasks queued on the workers (the calling thread's share, when it took one, is not one of them). */
  readonly tasks: number;
  /** Bytes copied from caller arrays into SharedArrayBuffers (0 when every input was already shared). */
  readonly copiedInBytes: number;
  /** Bytes copied from SharedArrayBuffers into the caller's output (0 when `out` was shared). */
  readonly copiedOutBytes: number;
  /** Pooled conv2d, convLayer and chained scan calls: where the time went. */
  readonly phases?: CallPhases;
}

/**
 * Stands in for the submission of an op's task: gets the task and the real submit, which takes
 * the message and the worker file it runs in. Installed by `@kernelkit/piscina/testing` (through
 * `setSubmitHook`, which no entry of the package exports) to send one task to the testing worker.
 */
export type SubmitHook = (op: OpName, task: Task, submit: (message: unknown, worker?: URL) => Promise<unknown>) => Promise<unknown>;
const submitHooks = new WeakMap<Pool, SubmitHook>();

export function setSubmitHook(pool: Pool, hook: SubmitHook): void {
  submitHooks.set(pool, hook);
}

/** Removes `hook` if it is still the pool's (a later one may have replaced it). */
export function removeSubmitHook(pool: Pool, hook: SubmitHook): void {
  if (submitHooks.get(pool) === hook) submitHooks.delete(pool);
}

/**
 * The pool behind each backend made by createPiscinaBackend, for the `./testing` hooks.
 * Package-internal: no entry of the package exports this module.
 */
const pools = new WeakMap<Backend, Pool>();

export function registerPool(backend: Backend, pool: Pool): void {
  pools.set(backend, pool);
}

/** The backend's pool; InvalidArgumentError naming `backend` for any other value. */
export function poolOf(backend: Backend): Pool {
  const pool = pools.get(backend);
  if (pool === undefined) throw new InvalidArgumentError('backend', 'not a backend made by createPiscinaBackend');
  return pool;
}

type PiscinaOptions = NonNullable<ConstructorParameters<typeof Piscina>[0]>;

/**
 * Piscina's worker first require()s the worker file, then import()s it. On Node 20.19+ require()
 * of an ES module is attempted and, about once per 300 worker starts, aborts the whole process
 * ("v8::Module::IsGraphAsync must be used on an instantiated module"): the workers get
 * --no-experimental-require-module, so the import() path is the only one. A worker's own flag list
 * may not hold process-wide flags (node --max-old-space-size, --expose-gc: Node refuses to start
 * the worker); those apply to every thread anyway, so they are left out of it.
 */
function newPiscina(options: PiscinaOptions): Piscina {
  if (!process.allowedNodeEnvironmentFlags.has('--experimental-require-module')) return new Piscina(options);
  if (workerExecArgv !== undefined) return new Piscina(workerExecArgv === 'inherit' ? options : { ...options, execArgv: workerExecArgv });
  let execArgv = [...process.execArgv, '--no-experimental-require-module'];
  for (;;) {
    try {
      const piscina = new Piscina({ ...options, execArgv });
      workerExecArgv = execArgv;
      return piscina;
    } catch (err) {
      const refused = refusedFlags(err);
      if (refused === undefined) throw err;
      const kept = execArgv.filter((flag) => !refused.includes(flag));
      // Flags we cannot tell apart (a value in its own argument): the workers inherit the parent's list.
      if (kept.length === execArgv.length) {
        workerExecArgv = 'inherit';
        return new Piscina(options);
      }
      execArgv = kept;
    }
  }
}

/**
 * The workers' flag list, found by the first pool of the process. Each refused attempt leaves
 * the message ports of the worker it could not start open for the life of the process, so the
 * search runs once, not once per pool.
 */
let workerExecArgv: string[] | 'inherit' | undefined;

/** The flags named by Node's "invalid execArgv flags: a, b" error; undefined for any other error. */
function refusedFlags(err: unknown): string[] | undefined {
  if (!(err instanceof Error) || (err as { code?: unknown }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') return undefined;
  const at = err.message.lastIndexOf(': ');
  return at < 0 ? [] : err.message.slice(at + 2).split(', ');
}

export class Pool {
  disposed = false;
  lastStats: CallStats | undefined;
  readonly buffers = new BufferCache<SharedArrayBuffer>(
    KEEP_BYTES,
    pooledSharedBuffer,
    (b) => b.byteLength,
  );
  /** Shared WebAssembly memories for the shared-memory kernels, by size in whole pages. */
  readonly memories = new BufferCache<ModuleMemory>(KEEP_BYTES, (n) => ({ memory: newSharedMemory(n), id: newBufferId() }), (m) => m.memory.buffer.byteLength);
  /** Memory of results the workers write in place (see ResultMemory in @kernelkit/core). */
  readonly results = new ResultMemory(KEEP_BYTES, { make: pooledSharedBuffer });
  /**
   * Shared WebAssembly memories whose kernels write a result the caller gets in place, a view
   * into the memory (no copy out), reused once the caller's result is collected.
   */
  readonly moduleResults = new ResultMemory<ModuleMemory>(KEEP_BYTES, { make: (n) => ({ memory: newSharedMemory(n), id: newBufferId() }), bufferOf: (m) => m.memory.buffer });
  /** The kernels' module, for shared memories the workers run them on in place, when the workers have it too. */
  readonly sharedModule: WasmModule | undefined;
  /** Serialises calls whose tasks wait for each other (stencil barriers), so two can never deadlock. */
  private barrierTail: Promise<void> = Promise.resolve();

  private constructor(
    readonly piscina: Piscina,
    readonly threads: number,
    workerData: PoolWorkerData,
  ) {
    this.sharedModule = workerData.wasmModule;
  }

  static async create(minThreads: number, maxThreads: number): Promise<Pool> {
    const file = fileURLToPath(WORKER_URL);
    if (!existsSync(file)) {
      const reason = `worker file ${file} not found; build the package first (npm run build)`;
      throw new BackendUnavailableError('piscina: cannot start the worker pool', [{ backend: 'piscina', reason }]);
    }
    // recordTiming off: Piscina's run/wait-time histograms are native memory that outlives the
    // pool (a bare Piscina create/run/destroy loop grew RSS 59 → 139 MiB over 360 cycles with it,
    // 58 → 62 MiB without), and nothing here reads them.
    const simd = wasmSupport();
    const workerData: PoolWorkerData = 'module' in simd ? { wasmModule: simd.module } : {};
    const piscina = newPiscina({ filename: WORKER_URL.href, minThreads, maxThreads, idleTimeout: 60_000, recordTiming: false, workerData });
    // A worker that fails outside a task (e.g. while loading) is reported here; without a
    // listener the 'error' event would crash the process. Task failures reject their run().
    let startError: unknown;
    piscina.on('error', (err: unknown) => {
      startError ??= err;
    });
    try {
      await piscina.run({ kind: 'ping' } satisfies Task);
    } catch (err) {
      await piscina.destroy().catch(() => {});
      const cause = startError ?? err;
      const reason = `a worker failed to start: ${errorMessage(cause)}`;
      throw new BackendUnavailableError('piscina: cannot start the worker pool', [{ backend: 'piscina', reason }], { cause });
    }
    return new Pool(piscina, maxThreads, workerData);
  }

  /** Submits one task of `op` to the workers. */
  run<R>(op: OpName, task: Task, signal: AbortSignal | null): Promise<R> {
    const submit = (message: unknown, worker?: URL): Promise<R> => this.piscina.run(message, worker === undefined ? { signal } : { signal, filename: worker.href }) as Promise<R>;
    const hook = submitHooks.get(this);
    return hook === undefined ? submit(task) : (hook(op, task, submit) as Promise<R>);
  }

  /** Runs `fn` after every earlier barrier call has finished. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.barrierTail.then(fn);
    this.barrierTail = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  async destroy(): Promise<void> {
    this.disposed = true;
    this.buffers.clear();
    this.memories.clear();
    this.results.close();
    this.moduleResults.close();
    await this.piscina.destroy();
  }
}
