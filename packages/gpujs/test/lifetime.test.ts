import { describeLifetimeCycles } from '@kernelkit/ops/testing';
import { createGpujsBackend } from '../src/index.js';

// gpu.js holds kernels (compiled functions, wasm memory, GL contexts) per instance; there is no
// count of them to sample, so RSS and Node's active resources are what is watched.
// Measured on the 2-core dev machine: 1000 cycles take ~13 s in cpu mode, ~30 s in webasm.
// headlessgl's cycles are in lifetime-headlessgl.test.ts, so that long file runs beside the others.
describeLifetimeCycles('gpujs/cpu', () => createGpujsBackend({ mode: 'cpu' }));
describeLifetimeCycles('gpujs/webasm', () => createGpujsBackend({ mode: 'webasm' }));
