import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { BACKEND_NAMES, createKernels, defaultLoaders, type BackendLoaders } from 'kernelkit';
import type { Backend, BackendName, OpArgs, OpData, OpName, RunOptions } from '@kernelkit/ops';
import type { BenchCase } from './cases.js';
import { PEER_NAMES, PEER_OPS, isPeer, openPeer, type Peer, type PeerName } from './peers/index.js';
import { errorMessage } from '@kernelkit/core';

/** The facade's per-call router, benchmarked as one more row per case next to the backends. */
export const ROUTER = 'kernelkit';
export type BenchBackend = BackendName | typeof ROUTER | PeerName;
export const BENCH_BACKENDS: readonly BenchBackend[] = [...BACKEND_NAMES, ROUTER, ...PEER_NAMES];
/** The router row's variant: no variant is passed, the router picks backend and variant per call. */
export const ROUTED_VARIANT = 'routed';

/** The ops a bench backend has rows for: the peers only have counterparts of the convolutions. */
export const benchOps = (name: BenchBackend, ops: readonly OpName[]): OpName[] => (isPeer(name) ? ops.filter((op) => PEER_OPS.includes(op)) : [...ops]);

export interface CallOutput {
  readonly data: OpData<OpName>;
  readonly timing?: { readonly kernelMs?: number | undefined; readonly uploadMs?: number | undefined; readonly readbackMs?: number | undefined } | undefined;
  readonly notes?: readonly string[] | undefined;
  /** The router's calls only: whether its choice for this call's key is settled, the trials so far, and the predictions of the pick and the runner-up. */
  readonly route?: {
    readonly settled: boolean;
    readonly backend?: string | undefined;
    readonly variant?: string | undefined;
    readonly candidates?: number | undefined;
    readonly trials?: Readonly<Record<string, number>> | undefined;
    readonly trialCalls?: Readonly<Record<string, number>> | undefined;
    readonly predictedMs?: number | undefined;
    readonly runnerUp?: { readonly backend: string; readonly variant: string; readonly predictedMs?: number | undefined } | undefined;
  } | undefined;
}

/** What a row measures: a kernelkit backend, the router, or a peer library, behind the calls runRow makes. */
export interface Contender {
  readonly name: BenchBackend;
  readonly info: { readonly description: string; readonly software: boolean; readonly mode?: string | undefined };
  readonly disposed: boolean;
  variants(op: OpName): readonly string[];
  call(op: OpName, args: OpArgs<OpName>, options: RunOptions<never>): Promise<CallOutput>;
  dispose(): Promise<void>;
}

function fromBackend(b: Backend): Contender {
  return {
    name: b.name,
    info: b.info,
    get disposed() {
      return b.disposed;
    },
    variants: (op) => b.variants(op),
    call: (op, args, o) => (b[op] as (a: OpArgs<OpName>, o: RunOptions<never>) => Promise<CallOutput>)(args, o),
    dispose: () => b.dispose(),
  };
}

function fromPeer(p: Peer): Contender {
  let disposed = false;
  return {
    name: p.name,
    info: { description: p.description, software: false },
    get disposed() {
      return disposed;
    },
    variants: (op) => p.variants(op),
    // Peers report no kernel time: a row's times are the whole call, as for the CPU backends.
    call: (op, args, o) => p.run(op, args, o.variant ?? p.variants(op)[0] ?? ''),
    dispose: async () => {
      disposed = true;
      await p.dispose();
    },
  };
}

export type Opened = { readonly status: 'ok'; readonly backend: Contender; readonly startMs: number } | { readonly status: 'errored'; readonly reason: string };

/**
 * Creates a backend for benchmarking. WebGPU takes any adapter: a software one is still measured
 * (and labelled). The router is calibrated here (or loads its cache), so its rows time routing,
 * not calibration; its start time includes that. Peers run `threads` (default: every core) as
 * their many-thread variant.
 */
export async function openBackend(name: BenchBackend, threads: number | undefined, loaders: BackendLoaders = defaultLoaders): Promise<Opened> {
  const t0 = performance.now();
  try {
    if (isPeer(name)) {
      const peer = await openPeer(name, threads ?? os.availableParallelism());
      return { status: 'ok', backend: fromPeer(peer), startMs: performance.now() - t0 };
    }
    if (name === ROUTER) {
      // A cache of its own: the row measures routing on the code and machine at hand, never on
      // what an earlier build left in the user's cache.
      const calibrationCache = join(await mkdtemp(join(os.tmpdir(), 'kernelkit-bench-')), 'calibration.json');
      const kernels = await createKernels({ route: 'auto', calibrationCache, ...(threads === undefined ? {} : { threads }) }, loaders);
      await kernels.calibrate();
      return { status: 'ok', backend: fromBackend(kernels), startMs: performance.now() - t0 };
    }
    const backend = await loaders[name](name === 'webgpu' ? { adapter: 'any' } : threads === undefined ? {} : { threads });
    return { status: 'ok', backend: fromBackend(backend), startMs: performance.now() - t0 };
  } catch (err) {
    return { status: 'errored', reason: errorMessage(err) };
  }
}

/** Largest case (BenchCase.size) worth running on emulated GPUs: beyond it one run takes many seconds. */
const SOFTWARE_CAP = 8 * 2 ** 20;
const GPUJS_CAP = 2 * 2 ** 20;
/** A naive brute-force grid search beyond this many points would take many minutes on a CPU. */
const NAIVE_GRID_CPU_POINTS = 1.1e9;
/** Emulated GPUs (llvmpipe, gpu.js on wasm/cpu) take tens of seconds per 10^7 grid points. */
const SOFTWARE_GRID_POINTS = 1e7;

/** Returns why a (backend, variant, case) is not run, or undefined to run it. */
export function capReason(b: Contender, variant: string, c: BenchCase): string | undefined {
  if (c.op === 'gridSearch' && variant === 'naive' && (b.name === 'cpu' || b.name === 'piscina') && c.work > NAIVE_GRID_CPU_POINTS) {
    return `naive brute force over ${c.work.toExponential(2)} points exceeds the CPU cap of ${NAIVE_GRID_CPU_POINTS.toExponential(1)} points`;
  }
  if (b.name === 'gpujs' && b.info.mode !== 'webgpu' && b.info.mode !== 'headlessgl' && c.size > GPUJS_CAP) {
    return `gpu.js in ${b.info.mode ?? 'its fallback'} mode: size ${c.size.toExponential(2)} exceeds the cap of ${GPUJS_CAP.toExponential(2)}`;
  }
  if (c.op === 'gridSearch' && (b.info.software || (b.name === 'gpujs' && b.info.mode !== 'webgpu')) && c.work > SOFTWARE_GRID_POINTS) {
    return `${b.name} on a software path: ${c.work.toExponential(2)} grid points exceed the cap of ${SOFTWARE_GRID_POINTS.toExponential(1)}`;
  }
  if (b.info.software && c.size > SOFTWARE_CAP) {
    return `software adapter: size ${c.size.toExponential(2)} exceeds the cap of ${SOFTWARE_CAP.toExponential(2)}`;
  }
  return undefined;
}
