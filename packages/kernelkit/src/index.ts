export { createKernels } from './kernels.js';
export type { CreateKernelsOptions, Kernels, RouteMode, RoutedResult, CalibrateKernelsOptions } from './kernels.js';
export type { RouteInfo, RouteChoice, CalibrationReport } from './router/router.js';
export { UNCALIBRATED_MAX_WORK } from './router/router.js';
export { DEFAULT_EXPLORE_FACTOR, DEFAULT_TRIAL_MAX_MS, DEFAULT_TRIAL_MIN_MS, TRIAL_CALLS, TRIAL_MAX_CALLS, WARM_UP_MAX_CALLS } from './router/explore.js';
export type { CostModel, BackendCost, OpCost, TimeFit, TransferFit, CalibrationSample, CallShape, InputPlace } from './router/cost-model.js';
export type { CalibrationProgress } from './router/calibrate.js';
export { CALIBRATION_FORMAT_VERSION, CALIBRATION_CACHE_ENV, defaultCalibrationPath } from './router/cache.js';
export { resolveBackend, readResolveOptions } from './resolve.js';
export type { ResolveOptions, ResolveContext, Resolved } from './resolve.js';
export { defaultLoaders, BACKEND_PACKAGES, notInstalledReason } from './loaders.js';
export type { BackendLoaders, LoadOptions } from './loaders.js';
export { BACKEND_NAMES, DEFAULT_ORDER, ADAPTER_KINDS, SOFTWARE_ADAPTER_REASON } from './names.js';
// What the optional backends' probes report, declared in @kernelkit/ops so that these types name no optional package.
export type { AdapterKind, WebGpuProbe, GpujsMode, ModeProbe } from '@kernelkit/ops';

// What users need to call the ops and handle failures, without importing the inner packages.
export {
  KernelkitError,
  InvalidArgumentError,
  UnsupportedError,
  BackendUnavailableError,
  DisposedError,
  AbortError,
  LimitExceededError,
  FileFormatError,
  DeviceError,
  WorkerError,
} from '@kernelkit/core';
export type { KernelkitErrorCode, BackendFailure, Timing } from '@kernelkit/core';
export { OP_NAMES, readCs610Problem, formatCs610Results, cs610Problem, CS610_GRID_PATH, CS610_DISP_PATH } from '@kernelkit/ops';
export type {
  Backend,
  BackendInfo,
  BackendName,
  AdapterInfo,
  OpName,
  RunOptions,
  Result,
  Progress,
  Conv2dArgs,
  Stencil3dArgs,
  StencilBoundary,
  ScanArgs,
  ScanArray,
  ScanDtype,
  GridDim,
  GridPoints,
  GridSearchArgs,
  ConvLayerArgs,
} from '@kernelkit/ops';
