import { describeLifetimeCycles } from '@kernelkit/ops/testing';
import { createPiscinaBackend } from '../src/index.js';
import { workerCount } from '../src/testing.js';

// Every call on the pool (inlineBelow 0), so each cycle starts, uses and ends its worker threads.
const POOL_ONLY = { conv2d: 0, stencil3d: 0, scan: 0, gridSearch: 0, convLayer: 0 };

// A cycle's cost is nearly all starting the two workers (a worker thread, then dist/worker.js
// and its imports). 1000 cycles are needed to see rare worker-start failures that abort the
// process and Piscina's per-pool timing histograms leaking (recordTiming; both in pool.ts).
describeLifetimeCycles('piscina, 2 threads', () => createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY }), {
  cycles: 1000,
  timeoutMs: 900_000,
  sample: (backend) => ({ workers: workerCount(backend) }),
  // Exactly the configured threads while alive (none lost, none extra); none after dispose (the default).
  aliveMax: { workers: 2 },
});
