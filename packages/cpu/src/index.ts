export { createCpuBackend } from './backend.js';
// Range kernels, shared with the worker-pool backend so the math exists once.
export { conv2dRows } from './kernels/conv2d.js';
export { stencilStep } from './kernels/stencil3d.js';
export { scanRange, sumRange, addCarry } from './kernels/scan.js';
export { convLayerPlanes } from './kernels/conv-layer.js';
export type { ConvLayerDims } from './kernels/conv-layer.js';
export { gridNaiveRange, gridPrunedRange, prefixCount } from './kernels/grid-search.js';
export type { PointCallback } from './kernels/grid-search.js';
export { outerDims, limitError } from './ops/grid-search.js';
export { stencilBuffers } from './ops/stencil3d.js';
