/// <reference types="@webgpu/types" preserve="true" />
// The WebGPU types (GPUDevice, GPUBuffer…) the declarations use; kept in the emitted .d.ts so a
// consumer's compiler sees them too.
export { createWebGpuBackend } from './backend.js';
export type { WebGpuBackendOptions } from './backend.js';
export { probeWebGpu } from './runtime/adapter.js';
export type { AdapterKind, WebGpuProbe } from './runtime/adapter.js';
export { screenThresholds } from './ops/grid-search.js';
export { webgpuScanStream, type WebGpuScanStreamOptions } from './ops/scan-stream.js';
export { maxPoolDevice, pooledSide } from './ops/max-pool.js';
export type { MaxPoolShape } from './ops/max-pool.js';
export type { ConvLayerChunking } from './ops/conv-layer.js';
export type { TunerOptions } from './tuning/tuner.js';
