/**
 * The conformance cases and tolerances without vitest. `@kernelkit/ops/testing`'s index also
 * loads the vitest suite, and the GPU host has no vitest, so the two vitest-free modules are
 * imported by file path next to the resolved `@kernelkit/ops` entry (types from the real export).
 */
type Testing = typeof import('@kernelkit/ops/testing');
const base = import.meta.resolve('@kernelkit/ops');
const cases = (await import(new URL('./testing/cases.js', base).href)) as Pick<
  Testing,
  'CONV2D_CASES' | 'CONV_LAYER_CASES' | 'conv2dCase' | 'convLayerCase' | 'GRID_CASES' | 'randomGridCase' | 'SCAN_LENGTHS' | 'scanCase' | 'STENCIL_CASES' | 'stencilCase'
>;
const tol = (await import(new URL('./testing/tolerance.js', base).href)) as Pick<Testing, 'conv2dTolerance' | 'convLayerTolerance' | 'stencil3dTolerance' | 'scanTolerance'>;

export const { CONV2D_CASES, CONV_LAYER_CASES, conv2dCase, convLayerCase, GRID_CASES, randomGridCase, SCAN_LENGTHS, scanCase, STENCIL_CASES, stencilCase } = cases;
export const { conv2dTolerance, convLayerTolerance, stencil3dTolerance, scanTolerance } = tol;
