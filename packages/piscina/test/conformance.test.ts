import { describeConformance } from '@kernelkit/ops/testing';
import { createPiscinaBackend } from '../src/index.js';

// As a user gets it: small cases run inline below the default thresholds.
await describeConformance('piscina', () => createPiscinaBackend({ threads: 2 }));

// Every call on the pool, whatever its size, so the worker paths meet every edge case too.
const POOL_ONLY = { conv2d: 0, stencil3d: 0, scan: 0, gridSearch: 0, convLayer: 0 };
await describeConformance('piscina (pool only)', () => createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY }));
