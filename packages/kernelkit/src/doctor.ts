import os from 'node:os';
import { createRequire } from 'node:module';
import type { BackendFailure } from '@kernelkit/core';
import { OP_NAMES, type Backend, type BackendInfo, type BackendName, type GpujsMode, type ModeProbe, type OpName, type WebGpuProbe } from '@kernelkit/ops';
import { BACKEND_PACKAGES, defaultLoaders, notInstalledReason, type BackendLoaders } from './loaders.js';
import { BACKEND_NAMES } from './names.js';
import { resolveBackend, type ResolveOptions } from './resolve.js';
import { cachedBackend, cachedChoices, candidateSet, defaultCalibrationPath, machineIdentity, readCalibrationCache, type MeasuredChoices } from './router/cache.js';
import { allBands, type Band } from './router/bands.js';
import type { BackendCost, CostModel } from './router/cost-model.js';
import { autoCandidates, backendKey } from './router/keys.js';
import { errorMessage } from '@kernelkit/core';

export type BackendStatus =
  | { readonly backend: BackendName; readonly status: 'available'; readonly info: BackendInfo; readonly variants: Readonly<Record<OpName, readonly string[]>>; readonly startMs: number }
  | { readonly backend: BackendName; readonly status: 'unavailable'; readonly reason: string };

export type Probe<T> = { readonly status: 'ok'; readonly value: T } | { readonly status: 'errored'; readonly message: string };

export interface DoctorReport {
  readonly machine: { readonly cpu: string; readonly cores: number; readonly memoryGiB: number; readonly os: string; readonly node: string };
  readonly backends: readonly BackendStatus[];
  readonly webgpuProbe: Probe<WebGpuProbe>;
  readonly gpujsModes: Probe<Readonly<Record<GpujsMode, ModeProbe>>>;
  readonly gl: Probe<{ readonly version: string | undefined }>;
  /** The calibration cache's model for this machine and these backends, and what auto-routing picks from it. */
  readonly calibration: Probe<{
    readonly path: string; readonly note?: string; readonly model: CostModel; readonly bands: Readonly<Record<OpName, readonly Band[]>>;
    /** Measured choices per routing key for these backends (what exploring auto-routed calls settled on). */
    readonly choices: MeasuredChoices;
  }>;
  readonly autoSelection:
    | { readonly status: 'ok'; readonly selected: BackendName; readonly skipped: readonly BackendFailure[] }
    | { readonly status: 'errored'; readonly message: string };
}

async function probe<T>(f: () => Promise<T> | T): Promise<Probe<T>> {
  try {
    return { status: 'ok', value: await f() };
  } catch (err) {
    return { status: 'errored', message: errorMessage(err) };
  }
}

async function backendStatus(name: BackendName, create: () => Promise<Backend>): Promise<BackendStatus> {
  const t0 = performance.now();
  let b: Backend | undefined;
  try {
    b = await create();
    const startMs = performance.now() - t0;
    const variants = Object.fromEntries(OP_NAMES.map((op) => [op, b!.variants(op)])) as Record<OpName, readonly string[]>;
    return { backend: name, status: 'available', info: b.info, variants, startMs };
  } catch (err) {
    return { backend: name, status: 'unavailable', reason: errorMessage(err) };
  } finally {
    // A live WebGPU device or worker pool would keep the process alive.
    await b?.dispose().catch(() => {});
  }
}

/**
 * `gl` (headless-gl) is a native addon gpu.js needs for its headlessgl mode; it comes with
 * @kernelkit/gpujs, so it is resolved from gpu.js's location there.
 */
function loadGl(): { version: string | undefined } {
  let gpujsEntry: string;
  try {
    gpujsEntry = createRequire(import.meta.url).resolve(BACKEND_PACKAGES.gpujs);
  } catch {
    throw new Error(notInstalledReason(BACKEND_PACKAGES.gpujs));
  }
  const r = createRequire(createRequire(gpujsEntry).resolve('gpu.js'));
  const gl = r('gl') as (w: number, h: number) => unknown;
  if (typeof gl !== 'function') throw new Error('gl did not export a context factory');
  let version: string | undefined;
  try {
    version = (r('gl/package.json') as { version?: string }).version;
  } catch {
    version = undefined;
  }
  // No context here: one would keep Dawn's OpenGL ES adapter from this process (gl-stacks in
  // core). Whether one can be made is the gpu.js probe's headlessgl line, checked in a child process.
  return { version };
}

/** Reads the model auto-routing would use here; doctor measures nothing (that is `kernelkit calibrate`). */
async function cachedModel(
  options: ResolveOptions, loaders: BackendLoaders, cachePath: string,
): Promise<{ path: string; note?: string; model: CostModel; bands: Record<OpName, Band[]>; choices: MeasuredChoices }> {
  const { file, note } = await readCalibrationCache(cachePath);
  const backends: Partial<Record<BackendName, BackendCost>> = {};
  for (const c of autoCandidates(options.threads, options.adapter)) {
    const k = await backendKey(c, loaders);
    const cost = 'key' in k ? cachedBackend(file, machineIdentity(), k.key) : undefined;
    if (cost !== undefined) backends[c.name] = cost;
  }
  const model: CostModel = { backends };
  const choices = cachedChoices(file, machineIdentity(), candidateSet(Object.values(backends).map((b) => b.key)));
  return { path: cachePath, ...(note === undefined ? {} : { note }), model, bands: allBands(model), choices };
}

export async function runDoctor(options: ResolveOptions = {}, loaders: BackendLoaders = defaultLoaders, cachePath: string = defaultCalibrationPath()): Promise<DoctorReport> {
  const cpus = os.cpus();
  const machine = {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} (${os.platform()}/${os.arch()})`,
    node: process.version,
  };
  const webgpuProbe = await probe(async () => {
    if (!loaders.probeWebGpu) throw new Error('no WebGPU probe');
    return loaders.probeWebGpu();
  });
  // A backend package that is not installed shows up as "not installed: npm install <package>":
  // the way to add it.
  const gpujsModes = await probe(async () => {
    if (!loaders.probeGpujsModes) throw new Error('no gpu.js probe');
    return loaders.probeGpujsModes();
  });
  const gl = await probe(loadGl);
  const threads = options.threads === undefined ? {} : { threads: options.threads };
  const backends: BackendStatus[] = [];
  // Sequential: two backends starting at once on a small machine would distort start times.
  for (const name of BACKEND_NAMES) {
    const load = name === 'webgpu' ? { adapter: options.adapter ?? 'any' } : threads;
    backends.push(await backendStatus(name, () => loaders[name](load)));
  }
  let autoSelection: DoctorReport['autoSelection'];
  try {
    const r = await resolveBackend(options, { loaders });
    await r.backend.dispose();
    autoSelection = { status: 'ok', selected: r.selected, skipped: r.skipped };
  } catch (err) {
    autoSelection = { status: 'errored', message: errorMessage(err) };
  }
  const calibration = await probe(() => cachedModel(options, loaders, cachePath));
  return { machine, backends, webgpuProbe, gpujsModes, gl, calibration, autoSelection };
}
