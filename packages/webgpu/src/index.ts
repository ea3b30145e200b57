export { createWebGpuBackend } from './backend.js';
export type { WebGpuBackendOptions } from './backend.js';
export { probeWebGpu } from './runtime/adapter.js';
export type { AdapterKind, WebGpuProbe } from './runtime/adapter.js';
export { screenThresholds } from './ops/grid-search.js';
