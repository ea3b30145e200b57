import type { BackendName } from '@kernelkit/ops';

export const BACKEND_NAMES = ['webgpu', 'piscina', 'cpu', 'gpujs'] as const satisfies readonly BackendName[];
/** Auto-selection order: gpu.js is only tried when asked for (it is slower than the pool in most modes). */
export const DEFAULT_ORDER = ['webgpu', 'piscina', 'cpu'] as const satisfies readonly BackendName[];
export const ADAPTER_KINDS = ['hardware', 'software', 'any'] as const;
export type AdapterKind = (typeof ADAPTER_KINDS)[number];
export const GPUJS_MODES = ['webgpu', 'headlessgl', 'webasm', 'cpu'] as const;
export type GpujsMode = (typeof GPUJS_MODES)[number];

export const SOFTWARE_ADAPTER_REASON =
  'software adapter (llvmpipe): slower than the worker pool; force with KERNELKIT_BACKEND=webgpu KERNELKIT_ADAPTER=software';
