import { describeConformance } from '@kernelkit/ops/testing';
import { createGpujsBackend } from '../src/index.js';

// The two modes every machine has. Both run the kernels on the CPU, one call at a time.
await describeConformance('gpujs/webasm', () => createGpujsBackend({ mode: 'webasm' }));
await describeConformance('gpujs/cpu', () => createGpujsBackend({ mode: 'cpu' }), { propertyRuns: 100 });
