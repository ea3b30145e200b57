import { AsyncLocalStorage } from 'node:async_hooks';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BackendUnavailableError, glStackConflict, type BackendFailure } from '@kernelkit/core';
import type { ModeProbe } from '@kernelkit/ops';
import { gpujs, GPUJS_MODES, kernelMode, type GpuInstance, type GpujsMode, type KernelRun, type KernelSettings } from './gpujs.js';
import { checkHeadlessGl } from './headless-gl.js';
import { findWebgpuHost, webgpuUsers, type WebgpuHost } from './webgpu-host.js';

export type { ModeProbe };

/**
 * Largest output (and input) per kernel call, in elements. gpu.js kernels do their index
 * arithmetic (`this.thread.x`, `y * width + x`) in f32 in every mode, which is exact only for
 * integers below 2^24: in webgpu mode on the H100, calls of 2^26 cells (conv2d 8192² K=5, a 40M
 * u32 scan, conv layers at B=10000) return wrong elements past index 2^24. So no mode may exceed
 * 2^24, and the GL backends keep 2^22 for texel coordinates.
 */
const MAX_CELLS: Record<GpujsMode, number> = { webgpu: 2 ** 24, headlessgl: 2 ** 22, webasm: 2 ** 24, cpu: 2 ** 24 };

/**
 * Modes whose limit is a hard one. cpu mode runs kernels as plain JavaScript, where `this.thread`
 * and index arithmetic are f64 and exact far past 2^24: there MAX_CELLS only sizes the slices,
 * and a single row, plane or image above it is still computed right (the oversize conformance
 * rows check it), so cpu mode does not refuse it.
 */
const HARD_LIMIT: Record<GpujsMode, boolean> = { webgpu: true, headlessgl: true, webasm: true, cpu: false };

/** Settings every kernel gets: f32 textures and highp on GL, sizes of inputs free to vary. */
export const KERNEL_DEFAULTS = { tactic: 'precision', precision: 'single', dynamicArguments: true } as const;

/** Kernels kept per backend; evicted ones are destroyed (GL textures, wasm memory). */
const KERNEL_CACHE_SIZE = 48;

/** Pipelines kept per backend (each holds its plan's buffers). */
const PIPELINE_CACHE_SIZE = 8;

const execFileAsync = promisify(execFile);

/** Built from headless-gl-probe.ts; found from src/ (tests) and dist/ alike. */
const HEADLESS_GL_PROBE = new URL('../dist/headless-gl-probe.js', import.meta.url);

/** `checkHeadlessGl` in a child process, so that probing leaves this process free to start Dawn's OpenGL ES adapter. */
async function checkHeadlessGlInChild(): Promise<{ renderer: string } | string> {
  try {
    const { stdout } = await execFileAsync(process.execPath, [fileURLToPath(HEADLESS_GL_PROBE)], { timeout: 60_000, maxBuffer: 1 << 20 });
    return JSON.parse(stdout) as { renderer: string } | string;
  } catch (e) {
    return `the headless-gl check (a child process) failed: ${(e as Error).message.split('\n')[0]}`;
  }
}

/** Which modes can run here, each with the reason when not. Creates nothing that stays alive. */
export async function probeGpujsModes(): Promise<Record<GpujsMode, ModeProbe>> {
  const host = await findWebgpuHost(true);
  let webgpu: ModeProbe;
  if (typeof host === 'string') webgpu = { available: false, reason: host };
  else webgpu = host.software ? { available: true, reason: `software adapter only (${host.adapter}); auto mode skips it` } : { available: true };
  if (typeof host !== 'string') {
    host.install();
    host.uninstall();
  }
  // The child cannot see what this process started: a conflict here is asked here.
  const gl = glStackConflict('headless-gl') ?? (await checkHeadlessGlInChild());
  return {
    webgpu,
    headlessgl: typeof gl === 'string' ? { available: false, reason: gl } : { available: true },
    webasm: gpujs.WebAssemblyKernel.isSupported ? { available: true } : { available: false, reason: 'WebAssembly (with SIMD) is not supported by this runtime' },
    cpu: { available: true },
  };
}

/** A live gpu.js instance in one mode, with a kernel cache and fallback reporting. */
export interface Runtime {
  readonly mode: GpujsMode;
  readonly software: boolean;
  readonly description: string;
  /** Cells one kernel call may read or write per array; the ops slice their work to stay under it. */
  readonly maxCells: number;
  /**
   * Whether a call above `maxCells` computes wrong elements here (f32 indexing), so that work
   * whose smallest call is above it must be refused (see `assertCallFits` in ops/kernel-util.ts).
   */
  readonly hardLimit: boolean;
  /** Cached kernel by key; `build` runs on a miss. */
  kernel(key: string, fn: (...args: never[]) => number, settings: KernelSettings): KernelRun;
  /** Runs a kernel (sync or async alike) and records in `notes` if gpu.js ran it elsewhere. */
  call(k: KernelRun, args: readonly unknown[], notes: Set<string>): Promise<unknown>;
  pipeline<P>(key: string, build: (gpu: GpuInstance) => P & Destroyable): P;
  /**
   * Runs one op call: every kernel and pipeline it takes from the cache stays in the cache (is
   * not evicted and destroyed) until `work` settles, however many other calls run meanwhile.
   */
  session<T>(work: () => Promise<T>): Promise<T>;
  /** Resolves once gpu.js has destroyed every kernel and pipeline of this runtime. */
  release(): Promise<void>;
}

type Destroyable = { destroy(): Promise<void> | void };

function unavailable(mode: GpujsMode, reason: string): BackendUnavailableError {
  return new BackendUnavailableError(`gpujs mode '${mode}' is unavailable`, [{ backend: `gpujs/${mode}`, reason }]);
}

async function startMode(mode: GpujsMode, forced: boolean): Promise<Runtime> {
  let host: WebgpuHost | undefined;
  let adapter: string;
  let software: boolean;
  if (mode === 'webgpu') {
    const found = await findWebgpuHost(forced);
    if (typeof found === 'string') throw unavailable(mode, found);
    host = found;
    host.install();
    adapter = `Dawn adapter ${found.adapter}`;
    software = found.software;
  } else if (mode === 'headlessgl') {
    const gl = checkHeadlessGl();
    if (typeof gl === 'string') throw unavailable(mode, gl);
    // headless-gl masks the renderer ("ANGLE") and has no debug-renderer extension; its context
    // comes from the X server's GLX, which under Xvfb is Mesa's software rasteriser. So it
    // counts as software unless the renderer string names a hardware vendor.
    const hardware = /nvidia|geforce|quadro|radeon|amd|intel|apple|mali|adreno/i.test(gl.renderer);
    adapter = `headless-gl, renderer '${gl.renderer}'${hardware ? '' : ' (masked; assumed Mesa software rendering)'}`;
    software = !hardware;
  } else if (mode === 'webasm') {
    if (!gpujs.WebAssemblyKernel.isSupported) throw unavailable(mode, 'WebAssembly is not supported by this runtime');
    adapter = 'WebAssembly f32x4 SIMD on the CPU, single thread (sync kernels)';
    software = true;
  } else {
    adapter = 'gpu.js plain-JavaScript kernels on the CPU';
    software = true;
  }
  const gpu = new gpujs.GPU({ mode });
  const rt = makeRuntime(gpu, mode, software, adapter, host);
  try {
    // Build and run one kernel and read back which class gpu.js actually used.
    const probe = rt.kernel('probe', function (this: { thread: { x: number } }, a: number[]) {
      return a[this.thread.x]! * 2;
    } as never, { output: [4] });
    const out = (await rt.call(probe, [new Float32Array([1, 2, 3, 4])], new Set())) as Float32Array;
    const ran = kernelMode(probe.kernel);
    if (ran !== mode) throw unavailable(mode, `gpu.js ran the probe kernel on '${ran}'${probe.fallbackReason ? `: ${probe.fallbackReason}` : ''}`);
    if (out[3] !== 8) throw unavailable(mode, `the probe kernel returned ${String(out[3])} instead of 8`);
  } catch (e) {
    await rt.release();
    if (e instanceof BackendUnavailableError) throw e;
    throw unavailable(mode, `the probe kernel failed: ${(e as Error).message}`);
  }
  return rt;
}

/** A cache entry and the op calls using it right now. */
interface Entry<T> {
  readonly value: T;
  users: number;
}

/**
 * An LRU cache whose eviction passes over entries in use: an op call pins what it takes (see
 * `Runtime.session`), so the cache may hold more than `size` while many calls run and shrinks
 * back as they finish.
 */
class PinningCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  constructor(
    private readonly size: number,
    private readonly evict: (value: T) => void,
  ) {}

  take(key: string, build: () => T, pins: Set<Entry<unknown>> | undefined): T {
    let e = this.entries.get(key);
    if (e === undefined) e = { value: build(), users: 0 };
    else this.entries.delete(key);
    this.entries.set(key, e);
    if (pins !== undefined && !pins.has(e)) {
      pins.add(e);
      e.users++;
    }
    this.trim(key);
    return e.value;
  }

  /** Evicts the least recently used entries nobody is using (never `keep`, the one just handed out). */
  trim(keep?: string): void {
    if (this.entries.size <= this.size) return;
    for (const [key, e] of this.entries) {
      if (this.entries.size <= this.size) return;
      if (e.users > 0 || key === keep) continue;
      this.entries.delete(key);
      this.evict(e.value);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}

function makeRuntime(gpu: GpuInstance, mode: GpujsMode, software: boolean, adapter: string, host: WebgpuHost | undefined): Runtime {
  // The entries the op call running in this async context has pinned.
  const calls = new AsyncLocalStorage<Set<Entry<unknown>>>();
  const kernels = new PinningCache<KernelRun>(KERNEL_CACHE_SIZE, (k) => k.destroy());
  // Pipelines evicted from the cache: their destroy waits for their in-flight runs, and release
  // waits for those destroys.
  const evicted = new Set<Promise<void>>();
  const pipelines = new PinningCache<Destroyable>(PIPELINE_CACHE_SIZE, (old) => {
    // Its failure to release must not reject a later call; release() still waits for it.
    const done = Promise.resolve(old.destroy()).catch(() => undefined);
    evicted.add(done);
    void done.then(() => evicted.delete(done));
  });
  let released = false;
  return {
    mode,
    software,
    description: `gpu.js ${mode} (${adapter})`,
    maxCells: MAX_CELLS[mode],
    hardLimit: HARD_LIMIT[mode],
    kernel(key, fn, settings) {
      return kernels.take(key, () => gpu.createKernel(fn, { ...KERNEL_DEFAULTS, ...settings }), calls.getStore());
    },
    async call(k, args, notes) {
      const out = await k(...args);
      const ran = kernelMode(k.kernel);
      if (ran !== mode) notes.add(`gpu.js ran a kernel on '${ran}' instead of '${mode}'${k.fallbackReason ? `: ${k.fallbackReason}` : ''}`);
      return out;
    },
    pipeline<P>(key: string, build: (g: GpuInstance) => P & Destroyable): P {
      return pipelines.take(key, () => build(gpu), calls.getStore()) as P;
    },
    async session<T>(work: () => Promise<T>): Promise<T> {
      const pins = new Set<Entry<unknown>>();
      try {
        return await calls.run(pins, work);
      } finally {
        for (const e of pins) e.users--;
        if (!released) {
          kernels.trim();
          pipelines.trim();
        }
      }
    },
    async release() {
      if (released) return;
      released = true;
      pipelines.clear();
      kernels.clear();
      try {
        await Promise.all(evicted);
        // gpu.destroy() destroys every kernel and pipeline it created, on a timer, after the
        // pipelines' in-flight runs; until it resolves they still hold wasm memory, GL contexts
        // and GPU buffers, so dispose() must not resolve before it.
        await gpu.destroy();
      } finally {
        if (host !== undefined) {
          // gpu.js keeps one GPUDevice per process; destroy it with the last webgpu backend so
          // Dawn lets the process exit, then take the navigator shim away.
          if (webgpuUsers() === 1) await gpujs.WebGPUContext.destroy();
          host.uninstall();
        }
      }
    },
  };
}

/**
 * Starts the requested mode, or the first that works in the order webgpu (hardware adapters
 * only) → headlessgl → webasm → cpu. Failures of the auto order are returned as notes.
 */
export async function createRuntime(mode: GpujsMode | undefined): Promise<{ rt: Runtime; skipped: BackendFailure[] }> {
  if (mode !== undefined) return { rt: await startMode(mode, true), skipped: [] };
  const skipped: BackendFailure[] = [];
  for (const m of GPUJS_MODES) {
    try {
      return { rt: await startMode(m, false), skipped };
    } catch (e) {
      skipped.push({ backend: `gpujs/${m}`, reason: e instanceof BackendUnavailableError ? (e.failures[0]?.reason ?? e.message) : (e as Error).message });
    }
  }
  throw new BackendUnavailableError('no gpu.js mode could start', skipped);
}
