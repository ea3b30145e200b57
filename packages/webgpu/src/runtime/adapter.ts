// Dawn's GLES backend needs a display-less EGL platform on headless machines; it must be set
// before the first create(['backend=opengles']). `??=` keeps a caller's explicit choice.
process.env.EGL_PLATFORM ??= 'surfaceless';

import { create } from 'webgpu';
import { glStackConflict } from '@kernelkit/core';
import type { AdapterInfo, AdapterKind, WebGpuProbe } from '@kernelkit/ops';
import { countGpus, hostGpuCount } from './devices.js';

/**
 * Dawn flags for create() on the default (hardware) backend; toggles apply to every device it
 * makes. Robustness (Tint clamping every index) slows kernels that index arrays in loops, the
 * optimized grid search most (apps/studies ceilings.js --flags compares flag sets); every kernel
 * bounds-checks explicitly (spare workgroups of folded grids included), so it is off. Timestamp
 * quantization makes sub-ms kernels unmeasurable. Pass `dawnFlags: []` to get Dawn's defaults back.
 * The OpenGL ES (llvmpipe) path keeps Dawn's defaults unless flags are given.
 */
export const HARDWARE_DAWN_FLAGS: readonly string[] = ['enable-dawn-features=disable_robustness', 'disable-dawn-features=timestamp_quantization'];

export interface OpenedAdapter {
  /** The create() object: it must be dropped (not kept in a module variable) for the process to exit. */
  readonly gpu: GPU;
  readonly adapter: GPUAdapter;
  readonly info: AdapterInfo;
  /** Dawn backend the adapter came from. */
  readonly backend: 'default' | 'opengles';
  /** What requestAdapter was given: a lost device is recreated on an adapter asked for the same way. */
  readonly request: GPURequestAdapterOptions;
}

const SOFTWARE_RE = /llvmpipe|lavapipe|swiftshader|softpipe|software|\bcpu\b/i;

/**
 * The limits that matter to the kernels: each is requested at the adapter's maximum when the
 * device is created (runtime/device.ts) and reported in AdapterInfo. One list for both, so the
 * limits a backend reports are the limits its device has.
 */
export const DEVICE_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupSizeZ',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
  'maxUniformBufferBindingSize',
] as const;

export function describeAdapter(adapter: GPUAdapter): AdapterInfo {
  const i = adapter.info;
  const text = `${i.vendor} ${i.architecture} ${i.device} ${i.description}`;
  // Dawn reports llvmpipe/SwiftShader as vendor "mesa"/"google" with the name in description.
  const fallback = (i as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter === true;
  const limits: Record<string, number> = {};
  for (const k of DEVICE_LIMITS) limits[k] = Number(adapter.limits[k]);
  return {
    vendor: i.vendor,
    architecture: i.architecture,
    description: i.description || i.device,
    software: fallback || SOFTWARE_RE.test(text),
    features: [...adapter.features].sort(),
    limits,
  };
}

// create() and requestAdapter() may print Dawn warnings ("Couldn't load Vulkan…", "…artificially
// reduced…") from native code straight to fd 2: no JS hook sees them. The kernelkit CLIs filter
// them (kernelkit/cli-kit); a library caller's stderr gets them as Dawn writes them.
async function tryOpen(backend: 'default' | 'opengles', flags: readonly string[]): Promise<OpenedAdapter | string> {
  const conflict = backend === 'opengles' ? glStackConflict('dawn-opengles') : undefined;
  if (conflict !== undefined) return `no OpenGL ES adapter: ${conflict}`;
  try {
    const gpu = create(backend === 'default' ? [...flags] : ['backend=opengles', ...flags]);
    const request: GPURequestAdapterOptions = backend === 'default' ? { powerPreference: 'high-performance' } : { featureLevel: 'compatibility' };
    const adapter = await gpu.requestAdapter(request);
    if (adapter === null) return backend === 'default' ? 'no hardware adapter (create([]) found none)' : 'no OpenGL ES adapter (is EGL/Mesa llvmpipe installed?)';
    return { gpu, adapter, info: describeAdapter(adapter), backend, request };
  } catch (e) {
    return `${backend} adapter request failed: ${(e as Error).message}`;
  }
}

/**
 * Opens an adapter of the requested kind. 'any' prefers hardware; a software adapter found
 * through the default backend still counts as software. Returns the reasons when none fits.
 */
export async function openAdapter(kind: AdapterKind, flags?: readonly string[]): Promise<OpenedAdapter | { reasons: string[] }> {
  const reasons: string[] = [];
  if (kind !== 'software') {
    const hw = await tryOpen('default', flags ?? HARDWARE_DAWN_FLAGS);
    if (typeof hw !== 'string' && !hw.info.software) return hw;
    reasons.push(typeof hw === 'string' ? hw : `default backend offered only a software adapter (${hw.info.description})`);
    if (typeof hw !== 'string' && kind === 'any') return hw;
    if (kind === 'hardware') return { reasons };
  }
  const sw = await tryOpen('opengles', flags ?? []);
  if (typeof sw !== 'string') {
    if (kind === 'software' && !sw.info.software) reasons.push(`the OpenGL ES adapter is hardware (${sw.info.description}), not software`);
    else return sw;
  } else reasons.push(sw);
  return { reasons };
}

/**
 * A fresh adapter for the same physical device, from the same create() object. An adapter can
 * make one device only (Dawn: 'adapter is "consumed"'), so recreating a lost device needs a new
 * one; it must describe itself exactly as the first did, else recreation fails.
 */
export async function reopenAdapter(opened: OpenedAdapter): Promise<GPUAdapter> {
  const adapter = await opened.gpu.requestAdapter(opened.request);
  if (adapter === null) throw new Error('requestAdapter found no adapter any more');
  const was = opened.info;
  const now = describeAdapter(adapter);
  if (now.vendor !== was.vendor || now.architecture !== was.architecture || now.description !== was.description) {
    throw new Error(`requestAdapter now offers a different adapter (${now.vendor} ${now.description}, was ${was.vendor} ${was.description})`);
  }
  return adapter;
}

export type { AdapterKind, WebGpuProbe };

let probeOnce: Promise<WebGpuProbe> | undefined;

/**
 * Is there any WebGPU adapter? Cached for the process. Only an adapter is requested (no
 * device), and the create() object goes out of scope, so nothing keeps the process alive.
 */
export function probeWebGpu(): Promise<WebGpuProbe> {
  probeOnce ??= openAdapter('any').then(
    async (r): Promise<WebGpuProbe> => {
      if ('reasons' in r) return { available: false, reason: r.reasons.join('; ') };
      const { gpus, toldApart } = await countGpus(r);
      return { available: true, software: r.info.software, adapter: r.info, gpus: { usable: gpus, toldApart, onHost: hostGpuCount() } };
    },
    (e: unknown): WebGpuProbe => ({ available: false, reason: (e as Error).message }),
  );
  return probeOnce;
}
