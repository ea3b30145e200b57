import type { AdapterInfo } from './backend.js';

/**
 * What the GPU backends report before they are created, declared here so that the facade's
 * types name no optional package: a CPU-only install type-checks without `skipLibCheck`.
 */

/** Which WebGPU adapter to ask for. */
export type AdapterKind = 'hardware' | 'software' | 'any';

/** What a cheap WebGPU adapter probe found, without creating a device. */
export interface WebGpuProbe {
  readonly available: boolean;
  readonly software?: boolean;
  readonly adapter?: AdapterInfo;
  readonly reason?: string;
  /**
   * GPUs the backend's `devices: 'all'` would use, how it tells them apart, and the GPUs on the
   * host's PCI bus (undefined where that cannot be read): fewer usable than on the host means
   * identical GPUs this process cannot reach.
   */
  readonly gpus?: { readonly usable: number; readonly toldApart: string; readonly onHost: number | undefined };
}

/** The gpu.js backend's modes. */
export type GpujsMode = 'webgpu' | 'headlessgl' | 'webasm' | 'cpu';

/** Whether one gpu.js mode starts here, and why not. */
export interface ModeProbe {
  readonly available: boolean;
  readonly reason?: string;
}
