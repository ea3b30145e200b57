// The contract
export type {
  Backend,
  BackendInfo,
  BackendName,
  AdapterInfo,
  OpName,
  OpTypes,
  OpArgs,
  OpProblem,
  OpData,
  RunOptions,
  Result,
  Progress,
  OutputKind,
  ArrayOutput,
  ResultData,
} from './backend.js';
export { OP_NAMES } from './backend.js';
export type { AdapterKind, WebGpuProbe, GpujsMode, ModeProbe } from './probes.js';
export { OPS } from './descriptors.js';
export type { OpDescriptor } from './descriptors.js';
export { createBackend } from './backend-kit.js';
export type { BackendSpec, DeviceOf, OpContext, OpImplementation, OpOutput, OpRunner, OpTable, ResidentOpImplementation, ResidentProblem, ResidentRunner } from './backend-kit.js';
export { isDeviceArray, dtypeOf, ctorOf } from './device-array.js';
export type { DeviceArray, DeviceArraySource, DeviceData, DeviceDtype, MaybeDevice, WithDeviceInput } from './device-array.js';
export type { DeviceForm } from './descriptors.js';
export { verifyResult, verifySampled, compareGridPoints } from './verify.js';
export { sampledReference } from './sample.js';
export type { SampledOp } from './sample.js';
export { sampleIndices } from './common/sample.js';
export type { SampledValue } from './common/sample.js';
export { TOLERANCE_SUMMARY, allowedError, opTolerance, conv2dTolerance, convLayerTolerance, stencil3dTolerance, scanTolerance, U32F, U64F } from './testing/tolerance.js';
export type { Tolerance } from './testing/tolerance.js';
export { compareFloat, compareExact } from './testing/compare.js';
export type { Mismatch } from './testing/compare.js';

// conv2d
export type { Conv2dArgs, Conv2dProblem } from './conv2d/types.js';
export { validateConv2d } from './conv2d/validate.js';
export { conv2dOutputLength, conv2dPixels, conv2dMultiplyAdds, conv2dFlops } from './conv2d/shape.js';
export { conv2dReference } from './conv2d/reference.js';
export { conv2dSample } from './conv2d/sample.js';
export { CONV2D_WORKLOADS, makeConv2dArgs } from './conv2d/workloads.js';
export type { Conv2dWorkload } from './conv2d/workloads.js';

// stencil3d
export type { Stencil3dArgs, Stencil3dProblem, StencilBoundary } from './stencil3d/types.js';
export { validateStencil3d } from './stencil3d/validate.js';
export { stencil3dOutputLength, stencil3dPointUpdates, STENCIL_DEFAULTS } from './stencil3d/shape.js';
export { stencil3dReference } from './stencil3d/reference.js';
export { stencil3dSample } from './stencil3d/sample.js';
export { STENCIL3D_WORKLOADS, makeStencil3dArgs } from './stencil3d/workloads.js';
export type { Stencil3dWorkload } from './stencil3d/workloads.js';

// scan
export type { ScanArgs, ScanArray, ScanDtype, ScanProblem } from './scan/types.js';
export { validateScan } from './scan/validate.js';
export { scanDtype, allocScanOutput, scanBytes } from './scan/shape.js';
export { scanReference } from './scan/reference.js';
export { scanSample } from './scan/sample.js';
export { scanStream } from './scan/stream.js';
export type { ScanStreamOptions } from './scan/stream.js';
export { SCAN_WORKLOADS, makeScanArgs } from './scan/workloads.js';
export type { ScanWorkload } from './scan/workloads.js';

// gridSearch
export type { GridDim, GridPoints, GridSearchArgs, GridSearchProblem } from './grid-search/types.js';
export { validateGridSearch, GRID_AXIS_VALUES_LIMIT, MAX_AXIS_POINTS, MAX_GRID_POINTS } from './grid-search/validate.js';
export { gridAxisCount, gridAxisValue, gridAxisValues, gridPointPasses, gridSuffixBounds, PointSink } from './grid-search/shape.js';
export { gridSearchReference } from './grid-search/reference.js';
export { GridRecheck } from './grid-search/recheck.js';
export { gridSearchWork } from './grid-search/work.js';
export { parseCs610Grid, parseCs610Disp, cs610Problem, readCs610Problem, formatCs610Results, formatLf, CS610_MAX_FILE_BYTES } from './grid-search/cs610.js';
export type { Cs610Constraints, ReadCs610Options } from './grid-search/cs610.js';
export { readFileChunks, readBoundedFile } from './bounded-read.js';
export { GRID_SEARCH_WORKLOADS, CS610_GRID_PATH, CS610_DISP_PATH, CS610_DIMS, cs610Points, reduceGrid } from './grid-search/workloads.js';
export type { GridSearchWorkload } from './grid-search/workloads.js';

// convLayer
export type { ConvLayerArgs, ConvLayerProblem } from './conv-layer/types.js';
export { validateConvLayer } from './conv-layer/validate.js';
export { convLayerOutputLength, convLayerOutputShape, convLayerMultiplyAdds, convLayerFlops } from './conv-layer/shape.js';
export { convLayerReference } from './conv-layer/reference.js';
export { convLayerSample } from './conv-layer/sample.js';
export { CONV_LAYER_WORKLOADS, makeConvLayerArgs } from './conv-layer/workloads.js';
export type { ConvLayerWorkload } from './conv-layer/workloads.js';

// utilities
export { Rng, randomF32, randomF64, randomU32, randomI32 } from './common/random.js';
