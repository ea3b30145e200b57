import type { AdapterKind, Backend, BackendName, GpujsMode, ModeProbe, WebGpuProbe } from '@kernelkit/ops';
import { errorMessage } from '@kernelkit/core';

export interface LoadOptions {
  readonly threads?: number;
  readonly adapter?: AdapterKind;
  /** The WebGPU backend's `devices` option. */
  readonly webgpuDevices?: number | 'all';
  readonly gpujsMode?: GpujsMode;
}

/**
 * How each backend is created. Injectable so the ordering logic can be tested without GPUs,
 * and so nothing heavy (Dawn, gpu.js, worker threads) is loaded until a backend is asked for.
 */
export interface BackendLoaders {
  readonly cpu: (o: LoadOptions) => Promise<Backend>;
  readonly piscina: (o: LoadOptions) => Promise<Backend>;
  readonly webgpu: (o: LoadOptions) => Promise<Backend>;
  readonly gpujs: (o: LoadOptions) => Promise<Backend>;
  /** Cheap adapter probe used by auto-selection to skip a software adapter without creating a device. */
  readonly probeWebGpu?: () => Promise<WebGpuProbe>;
  /** Which gpu.js modes start here (for doctor). */
  readonly probeGpujsModes?: () => Promise<Readonly<Record<GpujsMode, ModeProbe>>>;
}

/** The packages behind the backends; webgpu and gpujs are optional peers of this package. */
export const BACKEND_PACKAGES = {
  cpu: '@kernelkit/cpu',
  piscina: '@kernelkit/piscina',
  webgpu: '@kernelkit/webgpu',
  gpujs: '@kernelkit/gpujs',
} as const satisfies Record<BackendName, string>;

/** The reason a backend whose package is missing is skipped with: what to run to add it. */
export function notInstalledReason(packageName: string): string {
  return `not installed: npm install ${packageName}`;
}

/** Node's error for `import(specifier)` when the package itself (not one of its dependencies) cannot be found. */
function isMissingPackage(err: unknown, specifier: string): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === 'ERR_MODULE_NOT_FOUND' && typeof e.message === 'string' && e.message.includes(`'${specifier}'`);
}

export type ImportModule = (specifier: string) => Promise<unknown>;

/** Imports a backend package; a package that is not installed rejects with `notInstalledReason`. */
export async function importBackendPackage<M>(specifier: string, importModule: ImportModule = (s) => import(s)): Promise<M> {
  try {
    return (await importModule(specifier)) as M;
  } catch (err) {
    if (isMissingPackage(err, specifier)) throw new Error(notInstalledReason(specifier), { cause: err });
    throw new Error(`cannot import ${specifier}: ${errorMessage(err)}`, { cause: err });
  }
}

type CpuModule = typeof import('@kernelkit/cpu');
type PiscinaModule = typeof import('@kernelkit/piscina');
type WebGpuModule = typeof import('@kernelkit/webgpu');
type GpujsModule = typeof import('@kernelkit/gpujs');

/** The loaders that import the real packages through `importModule` (injectable to test a missing package). */
export function packageLoaders(importModule?: ImportModule): BackendLoaders {
  const load = <M>(name: BackendName): Promise<M> => importBackendPackage<M>(BACKEND_PACKAGES[name], importModule);
  return {
    cpu: async () => (await load<CpuModule>('cpu')).createCpuBackend(),
    piscina: async (o) => (await load<PiscinaModule>('piscina')).createPiscinaBackend(o.threads === undefined ? {} : { threads: o.threads }),
    webgpu: async (o) => (await load<WebGpuModule>('webgpu')).createWebGpuBackend({ adapter: o.adapter ?? 'hardware', ...(o.webgpuDevices === undefined ? {} : { devices: o.webgpuDevices }) }),
    gpujs: async (o) => (await load<GpujsModule>('gpujs')).createGpujsBackend(o.gpujsMode === undefined ? {} : { mode: o.gpujsMode }),
    probeWebGpu: async () => {
      try {
        return await (await load<WebGpuModule>('webgpu')).probeWebGpu();
      } catch (err) {
        return { available: false, reason: errorMessage(err) };
      }
    },
    probeGpujsModes: async () => (await load<GpujsModule>('gpujs')).probeGpujsModes(),
  };
}

export const defaultLoaders: BackendLoaders = packageLoaders();

export const loaderFor = (loaders: BackendLoaders, name: BackendName): ((o: LoadOptions) => Promise<Backend>) => loaders[name];
