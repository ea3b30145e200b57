/**
 * The range kernels and their WebAssembly runtime, without the backend: what the worker-pool
 * backend's workers run (`@kernelkit/cpu/range-kernels`). A worker loading only this entry starts
 * without @kernelkit/ops' validation, references and workloads.
 */
export { conv2dRows, conv2dRowsSimd, allFinite } from './kernels/conv2d.js';
export { stencilStep, stencilStepSimd, stencilRunSimd } from './kernels/stencil3d.js';
export { scanRange, scanRangeSimd, sumRange, scanInMemory, sumInMemory, addCarry } from './kernels/scan.js';
export { convLayerPlanes, convLayerPlanesSimd, packWeights, packedLength } from './kernels/conv-layer.js';
export type { ConvLayerDims } from './kernels/conv-layer.js';
export { gridNaiveRange, gridPrunedRange, gridPrunedRangeSimd, gridPrunedRangesSimd, GridSearchSimd, prefixCount } from './kernels/grid-search.js';
export type { PointCallback } from './kernels/grid-search.js';
export { wasmSupport, describeKernels, withKernels, WasmKernels, BAND_BYTES, INSTANCE_MAX_BYTES, WASM_SIMD_ENV, relaxedSimdValidates } from './wasm/runtime.js';
export type { WasmSupport } from './wasm/runtime.js';
export { sharedKernels, newSharedMemory, SHARED_MEMORY_MAX_BYTES } from './wasm/shared.js';
export type { SharedWasmMemory } from './wasm/shared.js';
export type { KernelExports } from './wasm/runtime.js';
