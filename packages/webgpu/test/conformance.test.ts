import { describeConformance } from '@kernelkit/ops/testing';
import { createWebGpuBackend } from '../src/index.js';

// llvmpipe (software) is what CI has. Property runs: the CI floor, or KERNELKIT_FC_RUNS when set
// (describeConformance reads it, so `npm run fuzz` reaches this suite too).
await describeConformance('webgpu (software)', () => createWebGpuBackend({ adapter: 'software' }), { scale: 'reduced', timeoutMs: 600_000 });
