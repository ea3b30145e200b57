export { createGpujsBackend } from './backend.js';
export type { GpujsBackendOptions } from './backend.js';
export { probeGpujsModes } from './runtime.js';
export type { ModeProbe } from './runtime.js';
export { GPUJS_MODES } from './gpujs.js';
export type { GpujsMode } from './gpujs.js';
