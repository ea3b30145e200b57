import type { AdapterKind, BackendName } from '@kernelkit/ops';

export type { AdapterKind, GpujsMode } from '@kernelkit/ops';

export const BACKEND_NAMES = ['webgpu', 'piscina', 'cpu', 'gpujs'] as const satisfies readonly BackendName[];
/** Auto-selection order: gpu.js is only tried when asked for (it is slower than the pool in most modes). */
export const DEFAULT_ORDER = ['webgpu', 'piscina', 'cpu'] as const satisfies readonly BackendName[];

// Options are checked before @kernelkit/webgpu (an optional peer) is loaded, so the kinds are
// listed here; the Record type makes the compiler refuse a kind missing from or unknown to it.
const ADAPTER_KIND_SET: Readonly<Record<AdapterKind, true>> = { hardware: true, software: true, any: true };
export const ADAPTER_KINDS: readonly AdapterKind[] = Object.keys(ADAPTER_KIND_SET) as AdapterKind[];

/** Why route: 'fixed' passes over a software adapter; auto-routing sends it the calls calibration says it wins. */
export const SOFTWARE_ADAPTER_REASON =
  "software adapter (llvmpipe): not a fixed default (auto-routing uses it where calibration shows it wins); force with KERNELKIT_BACKEND=webgpu KERNELKIT_ADAPTER=software";
