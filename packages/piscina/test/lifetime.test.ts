import { describeLifetimeCycles } from '@kernelkit/ops/testing';
import { createPiscinaBackend } from '../src/index.js';
import { workerCount } from '../src/testing.js';

// Every call on the pool (inlineBelow 0), so each cycle starts, uses and ends its worker threads.
const POOL_ONLY = { conv2d: 0, stencil3d: 0, scan: 0, gridSearch: 0, convLayer: 0 };

// A cycle costs ~0.25–0.38 s on the 2-core dev machine, nearly all of it starting the two
// workers (a bare worker thread ~80 ms, loading dist/worker.js and its imports ~200 ms more).
// 1000 cycles is the test that caught worker starts aborting the process about once per 300
// (see pool.ts) and Piscina's timing histograms leaking ~110 KB per pool (recordTiming, pool.ts).
describeLifetimeCycles('piscina, 2 threads', () => createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY }), {
  cycles: 1000,
  timeoutMs: 900_000,
  sample: (backend) => ({ workers: workerCount(backend) }),
  // Exactly the configured threads while alive (none lost, none extra); none after dispose (the default).
  aliveMax: { workers: 2 },
});
