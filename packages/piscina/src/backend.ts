import os from 'node:os';
import { describeKernels, wasmSupport } from '@kernelkit/cpu';
import { createBackend, type Backend } from '@kernelkit/ops';
import { resolveOptions, type PiscinaBackendOptions } from './options.js';
import { Pool, registerPool } from './pool.js';
import { conv2dOp } from './ops/conv2d.js';
import { convLayerOp } from './ops/conv-layer.js';
import type { Env } from './ops/context.js';
import { gridSearchOp } from './ops/grid-search.js';
import { scanOp } from './ops/scan.js';
import { stencil3dOp } from './ops/stencil3d.js';

/**
 * The worker-pool backend: one Piscina pool per instance, inputs and outputs in
 * SharedArrayBuffers, the CPU backend's range kernels in the workers. Validates `options`
 * (InvalidArgumentError naming e.g. `options.threads`) and starts the pool before resolving;
 * rejects with BackendUnavailableError when the workers cannot start (e.g. the package is not built).
 */
export async function createPiscinaBackend(options?: PiscinaBackendOptions): Promise<Backend> {
  const resolved = resolveOptions(options);
  const pool = await Pool.create(resolved.minThreads, resolved.maxThreads);
  const env: Env = { pool, options: resolved };
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  const threads = resolved.maxThreads;
  const backend = createBackend({
    name: 'piscina',
    info: {
      name: 'piscina',
      description: `Piscina worker pool, ${threads} thread${threads === 1 ? '' : 's'} on ${cpu} (${os.availableParallelism()} available, Node ${process.version}), ${describeKernels(wasmSupport())}`,
      software: false,
      threads,
      capabilities: { f64: true },
    },
    ops: {
      conv2d: conv2dOp(env),
      stencil3d: stencil3dOp(env),
      scan: scanOp(env),
      gridSearch: gridSearchOp(env),
      convLayer: convLayerOp(env),
    },
    release: () => pool.destroy(),
  });
  registerPool(backend, pool);
  return backend;
}
