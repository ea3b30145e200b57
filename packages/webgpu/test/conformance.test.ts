import { describeConformance } from '@kernelkit/ops/testing';
import { createWebGpuBackend } from '../src/index.js';

// llvmpipe (software) is what CI has. 200 property runs per op × variant is the CI floor.
const runs = Number(process.env.KERNELKIT_PROPERTY_RUNS ?? 200);
await describeConformance('webgpu (software)', () => createWebGpuBackend({ adapter: 'software' }), { scale: 'reduced', propertyRuns: runs, timeoutMs: 600_000 });
