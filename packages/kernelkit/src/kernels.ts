import type { BackendFailure } from '@kernelkit/core';
import { DisposedError, InvalidArgumentError, UnsupportedError, assertInteger } from '@kernelkit/core';
import { OP_NAMES } from '@kernelkit/ops';
import type {
  ArrayOutput, Backend, BackendName, Conv2dArgs, ConvLayerArgs, DeviceArray, GridPoints, GridSearchArgs, OpName, Result, ResultData, RunOptions, ScanArgs, ScanArray, Stencil3dArgs, WithDeviceInput,
} from '@kernelkit/ops';
import { defaultLoaders, type BackendLoaders } from './loaders.js';
import { SOFTWARE_ADAPTER_REASON } from './names.js';
import { autoCandidates } from './router/keys.js';
import { readResolveOptions, resolveBackend, type ResolveOptions } from './resolve.js';
import type { CostModel } from './router/cost-model.js';
import type { CalibrationProgress } from './router/calibrate.js';
import { Router, type CalibrationReport, type RouteInfo } from './router/router.js';
import { DEFAULT_CLOSE_RACE, DEFAULT_EXPLORE_FACTOR, DEFAULT_TRIAL_MAX_MS, DEFAULT_TRIAL_MIN_MS, DEFAULT_TRIAL_RUN_MS, TRIAL_CALLS, TRIAL_MAX_CALLS, type ExploreSettings } from './router/explore.js';

export type RouteMode = 'auto' | 'fixed';
const ROUTE_MODES: readonly RouteMode[] = ['auto', 'fixed'];

export interface CreateKernelsOptions extends ResolveOptions {
  /** Default variant for every op whose backend has a variant of this name; others keep their default. */
  readonly variant?: string;
  /**
   * 'auto' (the default): each call runs on the backend predicted fastest end to end for its op,
   * size and input location, from a per-machine calibration, until measured calls say otherwise (see `explore`). 'fixed': one backend for every
   * call, chosen as `backend` / `backends` / KERNELKIT_BACKEND say (any of those implies 'fixed').
   */
  readonly route?: RouteMode;
  /** Calibration cache file; default KERNELKIT_CALIBRATION_CACHE, else ~/.cache/kernelkit/calibration.json. */
  readonly calibrationCache?: string;
  /** Limit on the calibration an op's first auto-routed call runs when the cache has none; default 10 000 ms. */
  readonly calibrationBudgetMs?: number;
  /** Route by this model instead of the cache and calibration. */
  readonly costModel?: CostModel;
  /**
   * Where calibration runs. 'child' (the default with the package's own backends): in a child
   * process that writes the cache this process then reads, so the backends started only to be
   * measured, WebGPU among them, never run here, and neither does the ArrayBuffer detaching that
   * WebGPU and WebAssembly memory growth do, which slows typed-array JavaScript for the rest of a
   * process. 'process' (the default with injected loaders, which a child cannot have): here.
   */
  readonly calibrateIn?: 'child' | 'process';
  /**
   * 'auto' only. Default true: after the predicted pick, each other backend and variant predicted
   * within `factor` (default 8) of the best measured time for the call's op, size band, dtype and
   * data location gets a trial after an untimed warm-up call of that key, when predicted under
   * `trialMaxMs` (default 2000): at least `trialCalls` (default 4) timed calls, and more until they
   * add up to `trialMinMs` (default 250) or number `trialMaxCalls` (default 40), the candidates taking
   * turns of calls adding up to `trialRunMs` (default 50); the median of a trial's later half of calls counts. Later calls go to the fastest
   * measured, which the cache keeps. When the runner-up measured within `closeRace` (default 1.5) of
   * the fastest, the two are timed again back to back (as a trial's calls) before the key settles;
   * such a close race read from the cache is run again once per process, each side's time merged
   * with its cached one. A call with `timing: true` never times a trial (timing adds costs, such as
   * WebGPU's clock spin, that untimed calls do not pay): it takes the key's settled choice, else the
   * predicted pick. false: every call goes where predicted.
   */
  readonly explore?: boolean | { readonly factor?: number; readonly trialMaxMs?: number; readonly trialCalls?: number; readonly trialMinMs?: number; readonly trialMaxCalls?: number; readonly trialRunMs?: number; readonly closeRace?: number };
}

export interface CalibrateKernelsOptions {
  readonly ops?: readonly OpName[];
  /** Default 25 000 ms: calibration stops when it is spent and fits what it measured. */
  readonly budgetMs?: number;
  /** Re-measure even what the cache has. */
  readonly force?: boolean;
  readonly onProgress?: (p: CalibrationProgress) => void;
}

/** A Result that says where it ran and why. */
export type RoutedResult<D> = Result<D> & { readonly route: RouteInfo };

export interface Kernels extends Backend {
  readonly route: RouteMode;
  /** 'fixed': the backend doing every call. 'auto': the default backend, used for an op no prediction covers. */
  readonly selected: BackendName;
  /** Backends passed over (at creation, and in 'auto' those that later failed to start), with the reason. */
  readonly skipped: readonly BackendFailure[];
  /** The backend `selected` names. */
  readonly backend: Backend;
  /** Backends running now ('auto' starts one on the first call routed to it). */
  started(): Promise<readonly BackendName[]>;
  /**
   * Backend.warmUp on every backend running now ('fixed': the one), computing nothing: before
   * timing a few calls after other work (a GPU idle for a while runs short calls at lowered clocks).
   */
  warmUp(): Promise<void>;
  /** 'auto': the model routing uses (what the cache and calibration have given so far). */
  readonly costModel: CostModel | undefined;
  /**
   * 'auto': measures the ops (default all) on every candidate backend that the cache has no
   * fit for (`force`: on all), starting them, and saves the model. Rejects in 'fixed' mode.
   */
  calibrate(options?: CalibrateKernelsOptions): Promise<CalibrationReport>;
  conv2d<R extends RunOptions<Float32Array> = ArrayOutput>(args: WithDeviceInput<Conv2dArgs>, options?: R): Promise<RoutedResult<ResultData<R, Float32Array>>>;
  stencil3d<T extends Float32Array | Float64Array, R extends RunOptions<T> = ArrayOutput>(
    args: Omit<Stencil3dArgs, 'input'> & { readonly input: T | DeviceArray<T> },
    options?: R,
  ): Promise<RoutedResult<ResultData<R, T>>>;
  scan<T extends ScanArray, R extends RunOptions<T> = ArrayOutput>(args: WithDeviceInput<ScanArgs<T>>, options?: R): Promise<RoutedResult<ResultData<R, T>>>;
  gridSearch(args: GridSearchArgs, options?: RunOptions<never> & ArrayOutput): Promise<RoutedResult<GridPoints>>;
  convLayer<R extends RunOptions<Float32Array> = ArrayOutput>(args: WithDeviceInput<ConvLayerArgs>, options?: R): Promise<RoutedResult<ResultData<R, Float32Array>>>;
}

type AnyCall = (op: OpName, args: unknown, options: Record<string, unknown> | undefined) => Promise<RoutedResult<unknown>>;

function readOptions(options: CreateKernelsOptions, env: NodeJS.ProcessEnv): RouteMode {
  if (options.variant !== undefined && (typeof options.variant !== 'string' || options.variant === '')) {
    throw new InvalidArgumentError('options.variant', `expected a non-empty string, got ${JSON.stringify(options.variant)}`);
  }
  if (options.route !== undefined && !ROUTE_MODES.includes(options.route)) {
    throw new InvalidArgumentError('options.route', `expected one of ${ROUTE_MODES.join(', ')}, got ${JSON.stringify(options.route)}`);
  }
  if (options.calibrateIn !== undefined && options.calibrateIn !== 'child' && options.calibrateIn !== 'process') {
    throw new InvalidArgumentError('options.calibrateIn', `expected 'child' or 'process', got ${JSON.stringify(options.calibrateIn)}`);
  }
  if (options.calibrationBudgetMs !== undefined) assertInteger(options.calibrationBudgetMs, 'options.calibrationBudgetMs', 0, 600_000);
  if (options.calibrationCache !== undefined && (typeof options.calibrationCache !== 'string' || options.calibrationCache === '')) {
    throw new InvalidArgumentError('options.calibrationCache', `expected a file path, got ${JSON.stringify(options.calibrationCache)}`);
  }
  readExplore(options.explore);
  const { forced } = readResolveOptions(options, env);
  const oneBackend = options.backend !== undefined || options.backends !== undefined;
  if (options.route === 'auto' && oneBackend) {
    throw new InvalidArgumentError('options.route', "'auto' picks among the backends itself: leave out backend/backends, or use route: 'fixed'");
  }
  const mode = options.route ?? (oneBackend || forced !== undefined ? 'fixed' : 'auto');
  if (mode === 'fixed' && options.explore !== undefined && options.explore !== false) {
    throw new InvalidArgumentError('options.explore', "exploring is for route: 'auto'; these kernels use one backend");
  }
  return mode;
}

/** The exploration settings `explore` asks for (undefined: off). */
function readExplore(explore: CreateKernelsOptions['explore']): ExploreSettings | undefined {
  if (explore === false) return undefined;
  if (explore === undefined || explore === true) {
    return { factor: DEFAULT_EXPLORE_FACTOR, trialMaxMs: DEFAULT_TRIAL_MAX_MS, trialCalls: TRIAL_CALLS, trialMinMs: DEFAULT_TRIAL_MIN_MS, trialMaxCalls: TRIAL_MAX_CALLS, trialRunMs: DEFAULT_TRIAL_RUN_MS, closeRace: DEFAULT_CLOSE_RACE };
  }
  if (typeof explore !== 'object' || explore === null) {
    throw new InvalidArgumentError('options.explore', `expected a boolean or { factor, trialMaxMs, trialCalls, trialMinMs, trialMaxCalls, trialRunMs, closeRace }, got ${JSON.stringify(explore)}`);
  }
  const { factor = DEFAULT_EXPLORE_FACTOR, trialMaxMs = DEFAULT_TRIAL_MAX_MS, trialCalls = TRIAL_CALLS, trialMinMs = DEFAULT_TRIAL_MIN_MS, trialRunMs = DEFAULT_TRIAL_RUN_MS, closeRace = DEFAULT_CLOSE_RACE } = explore;
  // A smaller trialCalls with the default cap keeps the cap above it.
  const trialMaxCalls = explore.trialMaxCalls ?? Math.max(TRIAL_MAX_CALLS, typeof trialCalls === 'number' ? trialCalls : 0);
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 1) throw new InvalidArgumentError('options.explore.factor', `expected a number >= 1, got ${JSON.stringify(factor)}`);
  if (typeof trialMaxMs !== 'number' || !Number.isFinite(trialMaxMs) || trialMaxMs < 0) {
    throw new InvalidArgumentError('options.explore.trialMaxMs', `expected a number of ms >= 0, got ${JSON.stringify(trialMaxMs)}`);
  }
  if (typeof trialCalls !== 'number' || !Number.isInteger(trialCalls) || trialCalls < 1) {
    throw new InvalidArgumentError('options.explore.trialCalls', `expected an integer >= 1, got ${JSON.stringify(trialCalls)}`);
  }
  if (typeof trialMinMs !== 'number' || !Number.isFinite(trialMinMs) || trialMinMs < 0) {
    throw new InvalidArgumentError('options.explore.trialMinMs', `expected a number of ms >= 0, got ${JSON.stringify(trialMinMs)}`);
  }
  if (typeof trialMaxCalls !== 'number' || !Number.isInteger(trialMaxCalls) || trialMaxCalls < trialCalls) {
    throw new InvalidArgumentError('options.explore.trialMaxCalls', `expected an integer >= trialCalls (${trialCalls}), got ${JSON.stringify(trialMaxCalls)}`);
  }
  if (typeof trialRunMs !== 'number' || !Number.isFinite(trialRunMs) || trialRunMs < 0) {
    throw new InvalidArgumentError('options.explore.trialRunMs', `expected a number of ms >= 0, got ${JSON.stringify(trialRunMs)}`);
  }
  if (typeof closeRace !== 'number' || !Number.isFinite(closeRace) || closeRace < 1) {
    throw new InvalidArgumentError('options.explore.closeRace', `expected a number >= 1, got ${JSON.stringify(closeRace)}`);
  }
  return { factor, trialMaxMs, trialCalls, trialMinMs, trialMaxCalls, trialRunMs, closeRace };
}

function kernelsOf(
  mode: RouteMode, b: Backend, selected: BackendName, skipped: readonly BackendFailure[], call: AnyCall,
  rest: Pick<Kernels, 'started' | 'warmUp' | 'variants' | 'dispose' | 'calibrate'> & { costModel: () => CostModel | undefined; disposed: () => boolean },
): Kernels {
  const k = {
    name: b.name,
    info: b.info,
    route: mode,
    selected,
    skipped,
    backend: b,
    get disposed() {
      return rest.disposed();
    },
    get costModel() {
      return rest.costModel();
    },
    conv2d: (a: unknown, o?: Record<string, unknown>) => call('conv2d', a, o),
    stencil3d: (a: unknown, o?: Record<string, unknown>) => call('stencil3d', a, o),
    scan: (a: unknown, o?: Record<string, unknown>) => call('scan', a, o),
    gridSearch: (a: unknown, o?: Record<string, unknown>) => call('gridSearch', a, o),
    convLayer: (a: unknown, o?: Record<string, unknown>) => call('convLayer', a, o),
    started: rest.started,
    warmUp: rest.warmUp,
    calibrate: rest.calibrate,
    variants: rest.variants,
    dispose: rest.dispose,
    [Symbol.asyncDispose]: rest.dispose,
  };
  return k as unknown as Kernels;
}

/**
 * Kernels over the backends that start here. By default each call is routed to the backend
 * predicted fastest for it (see `route`); with `backend`, `backends`, KERNELKIT_BACKEND or
 * `route: 'fixed'`, one backend does every call, chosen as `resolveBackend` chooses.
 */
export async function createKernels(options: CreateKernelsOptions = {}, loaders: BackendLoaders = defaultLoaders, env: NodeJS.ProcessEnv = process.env): Promise<Kernels> {
  const mode = readOptions(options, env);
  const { threads, adapter, webgpuDevices } = readResolveOptions(options, env);
  // Also in 'auto': the backend today's order picks is the default for ops without a prediction,
  // and starting it here keeps the promise that a Kernels object has a working backend.
  const t0 = performance.now();
  const { backend: b, selected, skipped } = await resolveBackend(options, { loaders, env });
  const fallbackStartMs = performance.now() - t0;
  const v = options.variant;

  if (mode === 'fixed') {
    const call: AnyCall = async (op, a, o) => {
      const variant = v !== undefined && o?.['variant'] === undefined && b.variants(op).includes(v) ? v : undefined;
      const run = b[op] as unknown as (a: unknown, o: unknown) => Promise<Result<unknown>>;
      const r = await run.call(b, a, variant === undefined ? o : { ...o, variant });
      return { ...r, route: { mode: 'fixed', backend: b.name, variant: r.variant, reason: `one backend for every call (${selected})`, choice: 'fixed', settled: true } };
    };
    return kernelsOf(mode, b, selected, skipped, call, {
      started: async () => [selected],
      warmUp: () => b.warmUp?.() ?? (b.disposed ? Promise.reject(new DisposedError(b.name)) : Promise.resolve()),
      variants: (op) => b.variants(op),
      dispose: () => b.dispose(),
      disposed: () => b.disposed,
      costModel: () => undefined,
      calibrate: () => Promise.reject(new UnsupportedError("calibration is for route: 'auto'; these kernels use one backend", 'route')),
    });
  }

  const explore = readExplore(options.explore);
  const inChild = (options.calibrateIn ?? (loaders === defaultLoaders ? 'child' : 'process')) === 'child';
  const router = new Router({
    candidates: autoCandidates(threads, adapter, webgpuDevices),
    loaders,
    fallback: { name: selected, backend: b, startMs: fallbackStartMs },
    ...(options.costModel === undefined ? {} : { costModel: options.costModel }),
    ...(options.calibrationCache === undefined ? {} : { cachePath: options.calibrationCache }),
    ...(options.calibrationBudgetMs === undefined ? {} : { calibrationBudgetMs: options.calibrationBudgetMs }),
    ...(explore === undefined ? {} : { explore }),
    ...(inChild ? { calibrateInChild: { ...(threads === undefined ? {} : { threads }), ...(adapter === undefined ? {} : { adapter }) } } : {}),
  });
  const allSkipped = router.skipped;
  // A software adapter is a candidate here (calibration decides), not a reason to skip WebGPU.
  allSkipped.push(...skipped.filter((s) => s.reason !== SOFTWARE_ADAPTER_REASON));
  return kernelsOf(mode, b, selected, allSkipped, (op, a, o) => router.run(op, a, o, v), {
    started: () => router.startedNames(),
    warmUp: () => router.warmUp(),
    variants: (op) => router.variants(op),
    dispose: () => router.dispose(),
    disposed: () => router.disposed,
    costModel: () => router.costModel,
    calibrate: (c = {}) => router.calibrate({ ops: c.ops ?? OP_NAMES, budgetMs: c.budgetMs ?? 25_000, force: c.force ?? false, ...(c.onProgress ? { onProgress: c.onProgress } : {}) }),
  });
}
