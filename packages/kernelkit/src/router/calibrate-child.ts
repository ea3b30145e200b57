/**
 * Calibration in a process of its own, so the process that runs the routed calls never runs
 * what only calibration needs: WebGPU buffer mapping and WebAssembly memory growth detach
 * ArrayBuffers (which slows typed-array JavaScript for the rest of a process), and backends
 * started only to be measured would stay alive in it. The parent (router.ts) starts this file
 * with one JSON argument, reads progress and the report as JSON lines on stdout, and then reads
 * the fits from the cache file this process wrote.
 */
import type { BackendFailure } from '@kernelkit/core';
import type { BackendName, OpName } from '@kernelkit/ops';
import { createKernels } from '../kernels.js';
import type { AdapterKind } from '../names.js';
import type { CalibrationProgress } from './calibrate.js';

/** What the parent asks for. */
export interface ChildRequest {
  readonly cachePath: string;
  readonly ops: readonly OpName[];
  readonly budgetMs: number;
  readonly force: boolean;
  readonly threads?: number;
  readonly adapter?: AdapterKind;
}

/** One stdout line of the child. */
export type ChildMessage =
  | { readonly progress: CalibrationProgress }
  | { readonly report: { readonly backends: readonly BackendName[]; readonly ms: number; readonly skipped: readonly string[]; readonly saved: string }; readonly skippedBackends: readonly BackendFailure[] };

const send = (m: ChildMessage): void => void process.stdout.write(JSON.stringify(m) + '\n');

async function main(raw: string | undefined): Promise<void> {
  const req = JSON.parse(raw ?? '') as ChildRequest;
  const kernels = await createKernels(
    {
      route: 'auto',
      calibrateIn: 'process',
      calibrationCache: req.cachePath,
      ...(req.threads === undefined ? {} : { threads: req.threads }),
      ...(req.adapter === undefined ? {} : { adapter: req.adapter }),
    },
    undefined,
    // The parent's options already say threads and adapter; the environment's backend choice
    // (KERNELKIT_BACKEND) would make these kernels 'fixed', which cannot calibrate.
    { ...process.env, KERNELKIT_BACKEND: undefined },
  );
  try {
    const r = await kernels.calibrate({ ops: req.ops, budgetMs: req.budgetMs, force: req.force, onProgress: (progress) => send({ progress }) });
    send({ report: { backends: r.backends, ms: r.ms, skipped: r.skipped, saved: r.saved }, skippedBackends: kernels.skipped });
  } finally {
    await kernels.dispose();
  }
}

await main(process.argv[2]);
