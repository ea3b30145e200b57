/**
 * Opens kernelkit backends by name. Every package but @kernelkit/cpu is imported dynamically
 * through a string specifier: they are optional at run time (a backend that is not built or cannot
 * start is reported as skipped, with the reason) and this app must build without them.
 */
import type { Backend, DeviceArray } from '@kernelkit/ops';
import { errorMessage } from '@kernelkit/core';

export const BACKEND_CHOICES = ['auto', 'cpu', 'piscina', 'webgpu', 'gpujs'] as const;
export type BackendChoice = (typeof BACKEND_CHOICES)[number];
export type ConcreteBackend = Exclude<BackendChoice, 'auto'>;

export interface Opened {
  readonly backend: Backend;
  /** What was asked for, and what the facade picked or skipped; for the report. */
  readonly notes: readonly string[];
}

export interface Skipped {
  readonly backend: string;
  readonly reason: string;
}

type Factory = (options?: object) => Backend | Promise<Backend>;

const FACTORIES: Record<ConcreteBackend, { pkg: string; fn: string }> = {
  cpu: { pkg: '@kernelkit/cpu', fn: 'createCpuBackend' },
  piscina: { pkg: '@kernelkit/piscina', fn: 'createPiscinaBackend' },
  webgpu: { pkg: '@kernelkit/webgpu', fn: 'createWebGpuBackend' },
  gpujs: { pkg: '@kernelkit/gpujs', fn: 'createGpujsBackend' },
};

const why = (err: unknown): string => errorMessage(err).split('\n').join(' ');

async function loadFactory(pkg: string, fn: string): Promise<Factory> {
  const specifier: string = pkg;
  const mod = (await import(specifier)) as Record<string, unknown>;
  const f = mod[fn];
  if (typeof f !== 'function') throw new Error(`${pkg} does not export ${fn}()`);
  return f as Factory;
}

/** Opens one named backend; rejects with the reason when its package is missing or it cannot start. */
export async function openBackend(name: ConcreteBackend): Promise<Opened> {
  const { pkg, fn } = FACTORIES[name];
  const factory = await loadFactory(pkg, fn);
  return { backend: await factory(), notes: [] };
}

/** `auto`: the facade's pick (`createKernels`); cpu when the facade cannot be imported, saying so. */
export async function openAuto(variant: string | undefined): Promise<Opened> {
  let createKernels: Factory;
  try {
    createKernels = await loadFactory('kernelkit', 'createKernels');
  } catch (err) {
    const opened = await openBackend('cpu');
    return { backend: opened.backend, notes: [`facade 'kernelkit' not importable (${why(err)}); fell back to cpu`] };
  }
  const k = (await createKernels(variant === undefined ? {} : { variant })) as Backend & { selected?: string; skipped?: readonly Skipped[] };
  const notes = [`facade selected ${k.selected ?? k.name}`, ...(k.skipped ?? []).map((s) => `facade skipped ${s.backend}: ${s.reason}`)];
  return { backend: k, notes };
}

/** Tries every concrete backend; returns those that opened and the reasons for the rest. */
export async function openAll(): Promise<{ opened: { name: ConcreteBackend; backend: Backend }[]; skipped: Skipped[] }> {
  const opened: { name: ConcreteBackend; backend: Backend }[] = [];
  const skipped: Skipped[] = [];
  for (const name of ['cpu', 'piscina', 'webgpu', 'gpujs'] as const) {
    try {
      opened.push({ name, backend: (await openBackend(name)).backend });
    } catch (err) {
      skipped.push({ backend: name, reason: why(err) });
    }
  }
  return { opened, skipped };
}

export { why as errorReason };

/** Max pooling (window = stride, ceil mode) of a DeviceArray on the device that holds it. */
export type DevicePool = (
  input: DeviceArray<Float32Array>,
  shape: { readonly planes: number; readonly height: number; readonly width: number; readonly window: number },
) => Promise<DeviceArray<Float32Array>>;

let devicePool: Promise<DevicePool | undefined> | undefined;

/** @kernelkit/webgpu's `maxPoolDevice` when the package is importable and exports it, else undefined (loaded once). */
export function loadDevicePool(): Promise<DevicePool | undefined> {
  devicePool ??= (async () => {
    const specifier: string = FACTORIES.webgpu.pkg;
    try {
      const f = ((await import(specifier)) as Record<string, unknown>)['maxPoolDevice'];
      return typeof f === 'function' ? (f as DevicePool) : undefined;
    } catch {
      return undefined;
    }
  })();
  return devicePool;
}
