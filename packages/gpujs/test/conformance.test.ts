import { describeConformance } from '@kernelkit/ops/testing';
import { createGpujsBackend } from '../src/index.js';
import { oversizeRows } from './oversize.js';

// The two modes every machine has. Both run the kernels on the CPU, one call at a time.
// webasm indexes in f32 like the GPU modes, so it refuses a row, plane or image past 2^24 cells;
// cpu mode indexes in f64 and computes such inputs right, so it has no oversize rows.
await describeConformance('gpujs/webasm', () => createGpujsBackend({ mode: 'webasm' }), { oversize: oversizeRows(2 ** 24) });
await describeConformance('gpujs/cpu', () => createGpujsBackend({ mode: 'cpu' }), { propertyRuns: 100 });
