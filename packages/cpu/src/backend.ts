import os from 'node:os';
import { createBackend, type Backend } from '@kernelkit/ops';
import { conv2d } from './ops/conv2d.js';
import { convLayer } from './ops/conv-layer.js';
import { gridSearch } from './ops/grid-search.js';
import { scan } from './ops/scan.js';
import { stencil3d } from './ops/stencil3d.js';

/**
 * The sequential CPU backend: one thread, typed arrays, f64 accumulation. It never fails to
 * start, so it is the last resort of every fallback chain.
 */
export function createCpuBackend(): Backend {
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  return createBackend({
    name: 'cpu',
    info: {
      name: 'cpu',
      description: `sequential, 1 thread on ${cpu} (Node ${process.version})`,
      software: false,
      threads: 1,
      capabilities: { f64: true },
    },
    ops: { conv2d, stencil3d, scan, gridSearch, convLayer },
    release: () => {},
  });
}
