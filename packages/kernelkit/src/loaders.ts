import type { AdapterInfo, Backend, BackendName } from '@kernelkit/ops';
import type { AdapterKind, GpujsMode } from './names.js';

export interface LoadOptions {
  readonly threads?: number;
  readonly adapter?: AdapterKind;
  readonly gpujsMode?: GpujsMode;
}

export interface WebGpuProbe {
  readonly available: boolean;
  readonly software?: boolean;
  readonly adapter?: AdapterInfo;
  readonly reason?: string;
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
}

/** Imports `specifier` and returns export `name` as a function, with a clear reason when either is missing. */
async function importFunction<F>(specifier: string, name: string): Promise<F> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(specifier)) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`cannot import ${specifier}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const fn = mod[name];
  if (typeof fn !== 'function') throw new Error(`${specifier} does not export ${name}() (package not built yet?)`);
  return fn as F;
}

type Factory<O> = (options?: O) => Backend | Promise<Backend>;

export const defaultLoaders: BackendLoaders = {
  cpu: async () => (await importFunction<Factory<undefined>>('@kernelkit/cpu', 'createCpuBackend'))(),
  piscina: async (o) => {
    const create = await importFunction<Factory<{ threads?: number }>>('@kernelkit/piscina', 'createPiscinaBackend');
    return create(o.threads === undefined ? {} : { threads: o.threads });
  },
  webgpu: async (o) => {
    const create = await importFunction<Factory<{ adapter?: AdapterKind }>>('@kernelkit/webgpu', 'createWebGpuBackend');
    return create({ adapter: o.adapter ?? 'hardware' });
  },
  gpujs: async (o) => {
    const create = await importFunction<Factory<{ mode?: GpujsMode }>>('@kernelkit/gpujs', 'createGpujsBackend');
    return create(o.gpujsMode === undefined ? {} : { mode: o.gpujsMode });
  },
  probeWebGpu: async () => {
    try {
      return await (await importFunction<() => Promise<WebGpuProbe>>('@kernelkit/webgpu', 'probeWebGpu'))();
    } catch (err) {
      return { available: false, reason: err instanceof Error ? err.message : String(err) };
    }
  },
};

export const loaderFor = (loaders: BackendLoaders, name: BackendName): ((o: LoadOptions) => Promise<Backend>) => loaders[name];
