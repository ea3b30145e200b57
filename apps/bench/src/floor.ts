/**
 * The machine's memory floor, measured once per bench run: how fast this host copies memory and
 * writes fresh output. A row returning a fresh output array can never beat writing that array,
 * so each row's median is shown against it ("vs floor").
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { median } from '@kernelkit/core';
import { measureComputeCeiling, type ComputeCeiling } from './ceiling.js';
import type { BenchOptions, WorkloadName } from './types.js';

export interface MemoryFloor {
  /** Bytes per probe: the size of the array copied and of each fresh output written. */
  readonly bytes: number;
  /** Threads of the all-threads fresh write (`--threads`, default the machine's cores). */
  readonly threads: number;
  /** Runs of each probe; the speeds are their medians. */
  readonly samples: number;
  /** One thread copying into a destination it has written before (TypedArray.set): no page faults. */
  readonly copyGBps: number;
  /** One thread filling a new ArrayBuffer once: first-touch page faults included. */
  readonly freshWriteGBps: number;
  /** `threads` worker threads filling their parts of a new SharedArrayBuffer at once. */
  readonly freshWriteAllThreadsGBps: number;
  /** The compute ceiling for threads, measured with the floor (absent in older reports and without WebAssembly SIMD). */
  readonly computeCeiling?: ComputeCeiling;
}

/** Probe sizes: big enough to leave the caches on the seed workload, cheap on the smoke-test ones. */
export const FLOOR_PROBE_BYTES: Readonly<Record<WorkloadName, number>> = { seed: 256 << 20, small: 32 << 20, tiny: 8 << 20 };

/** How long each compute ceiling run takes on one thread: about 0.5 s of probing in all on seed, 60 ms on tiny. */
export const CEILING_RUN_MS: Readonly<Record<WorkloadName, number>> = { seed: 40, small: 20, tiny: 5 };

const SAMPLES = 3;
const PAGE = 4096;

// Each worker fills its byte range of the shared buffer it is sent, then answers.
const WORKER_SOURCE = `const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ buffer, start, end }) => {
  new Uint8Array(buffer, start, end - start).fill(1);
  parentPort.postMessage(0);
});`;

const reply = (w: Worker): Promise<void> =>
  new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    w.once('error', onError);
    w.once('message', () => {
      w.off('error', onError);
      resolve();
    });
  });

/** Every worker fills its page-aligned share of a new shared buffer of `bytes`; resolves when all are done. */
function fillShared(workers: readonly Worker[], bytes: number): Promise<void> {
  const buffer = new SharedArrayBuffer(bytes);
  const per = Math.ceil(bytes / PAGE / workers.length) * PAGE;
  return Promise.all(
    workers.map((w, i) => {
      const done = reply(w);
      w.postMessage({ buffer, start: Math.min(bytes, i * per), end: Math.min(bytes, (i + 1) * per) });
      return done;
    }),
  ).then(() => undefined);
}

const gbps = (bytes: number, ms: number): number => bytes / (ms / 1000) / 1e9;

/**
 * Measures the floor with `bytes` per probe and `threads` workers (started and warmed before any
 * timing). Nothing here detaches an ArrayBuffer, so the JavaScript rows after it run at full speed.
 */
export async function measureFloor(bytes: number, threads: number = availableParallelism()): Promise<MemoryFloor> {
  const workers = Array.from({ length: threads }, () => new Worker(WORKER_SOURCE, { eval: true }));
  try {
    // One small job each: the workers are up and their fill is compiled before the clock starts.
    await fillShared(workers, threads * PAGE);
    const source = new Uint8Array(bytes).fill(1);
    const target = new Uint8Array(bytes).fill(2);
    const copyMs: number[] = [];
    const freshMs: number[] = [];
    const freshAllMs: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      let t = performance.now();
      target.set(source);
      copyMs.push(performance.now() - t);
      t = performance.now();
      new Uint8Array(bytes).fill(1);
      freshMs.push(performance.now() - t);
      t = performance.now();
      await fillShared(workers, bytes);
      freshAllMs.push(performance.now() - t);
    }
    return {
      bytes,
      threads,
      samples: SAMPLES,
      copyGBps: gbps(bytes, median(copyMs)),
      freshWriteGBps: gbps(bytes, median(freshMs)),
      freshWriteAllThreadsGBps: gbps(bytes, median(freshAllMs)),
    };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/**
 * The run's probes: the memory floor at the workload's size and the compute ceiling (ceiling.ts),
 * both on every thread of the run, or neither with `--no-floor`.
 */
export async function runFloor(o: Pick<BenchOptions, 'workload' | 'threads' | 'floor'>): Promise<MemoryFloor | undefined> {
  if (o.floor === false) return undefined;
  const threads = o.threads ?? availableParallelism();
  const floor = await measureFloor(FLOOR_PROBE_BYTES[o.workload], threads);
  const computeCeiling = await measureComputeCeiling(threads, CEILING_RUN_MS[o.workload]);
  return computeCeiling === undefined ? floor : { ...floor, computeCeiling };
}

/** The fastest fresh-output write the probe saw: all threads, unless one thread alone did better (a busy machine). */
export const floorGBps = (floor: MemoryFloor): number => Math.max(floor.freshWriteAllThreadsGBps, floor.freshWriteGBps);

/** The least time, in ms, any call returning a fresh output of `outputBytes` spends writing it on this machine. */
export const floorMs = (outputBytes: number, floor: MemoryFloor): number => (outputBytes / (floorGBps(floor) * 1e9)) * 1000;

/** A row's median as a multiple of its output's floor time (1 would be writing the output and nothing else). */
export const vsFloor = (medianMs: number, outputBytes: number, floor: MemoryFloor): number => medianMs / floorMs(outputBytes, floor);
