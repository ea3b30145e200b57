import { createRequire } from 'node:module';
import { glStackConflict, markGlStackStarted } from '@kernelkit/core';

/**
 * gpu.js's webgpu backend reads `globalThis.navigator.gpu` and calls `requestAdapter()` with no
 * options. In Node that object must come from Dawn (`webgpu` package). This module finds an
 * adapter, says whether it is hardware, and installs a `navigator.gpu` shim for the backend's
 * lifetime only: a live Dawn instance keeps the process alive, so `uninstall` removes it again.
 */
const require = createRequire(import.meta.url);

interface DawnAdapter {
  readonly info?: { vendor?: string; architecture?: string; description?: string; device?: string };
  readonly isFallbackAdapter?: boolean;
}
interface DawnGpu {
  requestAdapter(options?: Record<string, unknown>): Promise<DawnAdapter | null>;
  getPreferredCanvasFormat?(): string;
}
interface DawnModule {
  create(flags: string[]): DawnGpu;
  globals: Record<string, unknown>;
}

export interface WebgpuHost {
  readonly software: boolean;
  readonly adapter: string;
  /** Puts the shim on `globalThis.navigator`; gpu.js's own `requestAdapter()` then finds this adapter. */
  install(): void;
  uninstall(): void;
}

const SOFTWARE = /llvmpipe|lavapipe|swiftshader|softpipe|software/i;

function describe(a: DawnAdapter): string {
  const i = a.info ?? {};
  return [i.vendor, i.architecture, i.device, i.description].filter((s) => s !== undefined && s !== '').join(' / ') || 'unknown adapter';
}

function isSoftware(a: DawnAdapter): boolean {
  return a.isFallbackAdapter === true || SOFTWARE.test(describe(a));
}

/**
 * Looks for a hardware adapter first (Vulkan/Metal/D3D via `create([])`); when `allowSoftware`,
 * falls back to Dawn's OpenGL ES backend on Mesa llvmpipe, which needs `EGL_PLATFORM=surfaceless`
 * and the compatibility feature level. Returns a reason string when nothing usable answers.
 */
export async function findWebgpuHost(allowSoftware: boolean): Promise<WebgpuHost | string> {
  let dawn: DawnModule;
  try {
    dawn = require('webgpu') as DawnModule;
  } catch (e) {
    return `the webgpu (Dawn) package cannot be loaded: ${(e as Error).message}`;
  }
  let gpu = dawn.create([]);
  let options: Record<string, unknown> = { powerPreference: 'high-performance' };
  let opengles = false;
  let adapter = await gpu.requestAdapter(options).catch(() => null);
  if (adapter !== null && isSoftware(adapter) && !allowSoftware) {
    return `Dawn's only adapter is software (${describe(adapter)}); force mode 'webgpu' to use it`;
  }
  if (adapter === null) {
    if (!allowSoftware) return 'Dawn found no hardware adapter';
    const conflict = glStackConflict('dawn-opengles');
    if (conflict !== undefined) return `Dawn found no hardware adapter, and its OpenGL ES adapter cannot start here: ${conflict}`;
    // Dawn reads EGL_PLATFORM when the GL backend starts; surfaceless needs no display.
    process.env.EGL_PLATFORM ??= 'surfaceless';
    gpu = dawn.create(['backend=opengles']);
    opengles = true;
    options = { featureLevel: 'compatibility' };
    adapter = await gpu.requestAdapter(options).catch(() => null);
    if (adapter === null) return 'Dawn found no adapter (neither hardware nor the OpenGL ES software adapter)';
  }
  const found = adapter;
  const dawnGpu = gpu;
  const adapterOptions = options;
  return {
    software: isSoftware(found),
    adapter: describe(found),
    install() {
      if (shared.count++ > 0) return;
      // gpu.js asks `requestAdapter()` with no options; the shim asks Dawn with the options
      // that found the adapter above, so gpu.js gets the same kind of adapter.
      const nav = {
        gpu: {
          requestAdapter: (o?: Record<string, unknown>) => {
            // gpu.js makes its device on this adapter: on OpenGL ES, the context headless-gl cannot run beside.
            if (opengles) markGlStackStarted('dawn-opengles');
            return dawnGpu.requestAdapter({ ...adapterOptions, ...o });
          },
          getPreferredCanvasFormat: () => dawnGpu.getPreferredCanvasFormat?.() ?? 'rgba8unorm',
        },
      };
      shared.saved = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
      shared.added = Object.keys(dawn.globals).filter((k) => !(k in globalThis));
      for (const k of shared.added) Object.defineProperty(globalThis, k, { value: dawn.globals[k], configurable: true, writable: true });
      Object.defineProperty(globalThis, 'navigator', { value: nav, configurable: true, writable: true });
    },
    uninstall() {
      if (shared.count === 0 || --shared.count > 0) return;
      const g = globalThis as Record<string, unknown>;
      if (shared.saved !== undefined) Object.defineProperty(globalThis, 'navigator', shared.saved);
      else delete g.navigator;
      for (const k of shared.added) delete g[k];
      shared.added = [];
      shared.saved = undefined;
    },
  };
}

/**
 * One shim for the process: gpu.js shares one GPUDevice between all GPU instances, so the shim
 * stays while any webgpu backend is alive and goes with the last one.
 */
const shared: { count: number; saved: PropertyDescriptor | undefined; added: string[] } = { count: 0, saved: undefined, added: [] };

/** True while some webgpu-mode backend holds the shim (the last one destroys the device). */
export const webgpuUsers = (): number => shared.count;
