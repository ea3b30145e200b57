export { createCpuBackend } from './backend.js';
// Range kernels, shared with the worker-pool backend so the math exists once.
export * from './range-kernels.js';
export { outerDims, limitError } from './ops/grid-search.js';
export { stencilBuffers } from './ops/stencil3d.js';
