import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DisposedError, resultsHeldBetweenCollections, type BackendFailure, errorMessage } from '@kernelkit/core';
import { isDeviceArray, OP_NAMES, OPS, type Backend, type BackendName, type OpName, type Result } from '@kernelkit/ops';
import type { BackendLoaders } from '../loaders.js';
import { backendKey, type Candidate } from './keys.js';
import {
  cachedBackend, cachedChoices, candidateSet, clearMeasuredChoices, defaultCalibrationPath, machineIdentity, readCalibrationCache, writeCalibrationCache, writeMeasuredChoices, type CacheRead, type MachineIdentity,
} from './cache.js';
import { calibrate, type CalibrationProgress } from './calibrate.js';
import type { ChildRequest } from './calibrate-child.js';
import { CalibrationTimeoutError, runCalibrationChild } from './run-child.js';
import type { AdapterKind } from '../names.js';
import { callShape } from './call-shape.js';
import { opCostOf, predictMs, routedVariants, type BackendCost, type CallShape, type CostModel } from './cost-model.js';
import {
  addTrialCall, closeRunnerUp, confirmCall, confirmSide, confirmStep, decide, mergeRerace, nextTurn, pickName, POOL_MARGIN, POOL_MARGIN_MAX_MS, RETRIAL_FACTOR, routingKey, scaledMs, trialOf, warmedUp, warmUpCalls, type Confirmation, type ConfirmStep, type ExploreSettings, type MeasuredChoice, type Pick, type Trial, type TrialRun, type Turn, type WarmUp,
} from './explore.js';

/**
 * How the call's backend was chosen. 'fixed': the one backend of route: 'fixed'. 'default': no
 * prediction covers the op, or a call this small ran before its op's first calibration
 * (UNCALIBRATED_MAX_WORK). 'predicted': lowest predicted time (exploration off). 'warm-up': a
 * candidate's first call of the routing key in this process, before its trial (its first calls,
 * while its host results are fresh memory: warmUpCalls). 'trial': a timed call
 * of a candidate while its routing key explores. 'confirm': a call of the fastest candidate of a
 * close race, timed in blocks back to back before the key settles. 'rematch': the close race's
 * runner-up, in blocks alternating with those (each block's first call untimed). 'measured': the
 * fastest candidate measured.
 */
export type RouteChoice = 'fixed' | 'default' | 'predicted' | 'warm-up' | 'trial' | 'confirm' | 'rematch' | 'measured';

/** Why a call ran where it did. */
export interface RouteInfo {
  /** 'auto': picked per call by predicted time; 'fixed': the one backend the options chose. */
  readonly mode: 'auto' | 'fixed';
  readonly backend: BackendName;
  readonly variant: string;
  /** Predicted end-to-end ms (start-up included when the backend was not running yet). */
  readonly predictedMs?: number;
  /** The next candidate: for 'measured', the fastest other one measured (with its ms); else the next by prediction. */
  readonly runnerUp?: { readonly backend: BackendName; readonly variant: string; readonly predictedMs?: number; readonly measuredMs?: number };
  readonly reason: string;
  readonly choice: RouteChoice;
  /** True when later calls with this routing key go where this one went, without more trials. */
  readonly settled: boolean;
  /** The routing key ('auto'): op, size band, dtype, input and output place. */
  readonly key?: string;
  /** How many backend/variant candidates this call's key weighs ('auto'). */
  readonly candidates?: number;
  /** This call's end-to-end ms, for a trial; the chosen candidate's trial ms, for 'measured'. */
  readonly measuredMs?: number;
  /** 'measured' and 'trial': every trial of the key so far, ms by `backend/variant` (see trialTime in explore.ts). */
  readonly trials?: Readonly<Record<string, number>>;
  /** With `trials`: how many calls each trial timed, by `backend/variant`. */
  readonly trialCalls?: Readonly<Record<string, number>>;
}

export interface CalibrationReport {
  /** Backends measured (those already in the cache are not, unless forced). */
  readonly backends: readonly BackendName[];
  readonly ms: number;
  readonly budgetMs: number;
  /** Steps left out, with the reason. */
  readonly skipped: readonly string[];
  /** Where the result went ('saved in <path>' or why not). */
  readonly saved: string;
  readonly path: string;
  readonly model: CostModel;
}

export type { Candidate } from './keys.js';

export interface RouterOptions {
  readonly candidates: readonly Candidate[];
  readonly loaders: BackendLoaders;
  /** Used when no candidate has a prediction for an op; already started. */
  readonly fallback: { readonly name: BackendName; readonly backend: Backend; readonly startMs?: number };
  /** A fixed model: no cache, no calibration (tests, or a model measured elsewhere). */
  readonly costModel?: CostModel;
  readonly cachePath?: string;
  /** Limit on the calibration a first call of an op triggers. */
  readonly calibrationBudgetMs?: number;
  readonly onCalibrationProgress?: (p: CalibrationProgress) => void;
  /**
   * Calibrate in a child process with the package's own backends, created with these options
   * (see calibrate-child.ts for why); without it, in this process with `loaders`.
   */
  readonly calibrateInChild?: { readonly threads?: number; readonly adapter?: AdapterKind };
  /** Measured choice per routing key (see explore.ts); without it, every call goes where predicted. */
  readonly explore?: ExploreSettings;
}

/**
 * How long past its budget a calibration child may run (its own start, starting the backends, the
 * step under way when the budget ran out) before it is stopped and its op routed without fits.
 */
export const CHILD_GRACE_MS = 20_000;

/** Built code only: from src/router (tests) and dist/router alike this is the compiled child. */
const CHILD_SCRIPT = new URL('../../dist/router/calibrate-child.js', import.meta.url);

type Started = { readonly status: 'ok'; readonly backend: Backend; readonly startMs: number } | { readonly status: 'failed'; readonly reason: string };

/**
 * Host-array calls of at most this much work (the op's unit: multiply-adds, point updates, bytes
 * moved, pruned-search node tests) run on the default backend while their op has no calibration, and do not
 * start one: any backend finishes them in about a millisecond, so no choice could save what
 * calibrating costs (seconds). The op's first larger call calibrates it.
 */
export const UNCALIBRATED_MAX_WORK = 2 ** 16;

interface CalibrateRequest {
  readonly ops: readonly OpName[];
  readonly budgetMs: number;
  readonly force: boolean;
  readonly onProgress?: (p: CalibrationProgress) => void;
}

/**
 * Per-call routing over several backends. Each is started on the first call routed to it (or
 * when calibration needs it); `dispose` releases every one started.
 */
export class Router {
  readonly skipped: BackendFailure[] = [];
  private readonly started = new Map<BackendName, Promise<Started>>();
  /** Each candidate's cache key, or why it cannot be one: found once (WebGPU's takes a probe). */
  private readonly keys = new Map<BackendName, ReturnType<typeof backendKey>>();
  private model: { backends: Partial<Record<BackendName, BackendCost>> };
  private readonly calibrating = new Map<OpName, Promise<string | undefined>>();
  private readonly machine: MachineIdentity = machineIdentity();
  private cacheLoaded: Promise<string | undefined> | undefined;
  private disposedFlag = false;
  /** Set once a calibration child was stopped at its time limit: why. */
  private childTimedOut: string | undefined;
  /** Backends that failed to start in a calibration child. */
  private readonly unstartable = new Set<BackendName>();
  /**
   * Untimed calls and their ms per `backend/variant routing key` (see warmUpCalls): a candidate
   * warmed up at a key is timed from then on. Per key, not per op: a first call at a new size
   * still grows memory and allocates buffers, which its trial must not count.
   */
  private readonly warmUps = new Map<string, { readonly calls: number; readonly ms: number; readonly fastest?: WarmUp }>();
  /** Trials per routing key while it explores, by `backend/variant`. */
  private readonly trials = new Map<string, Map<string, TrialRun>>();
  /** Per routing key, the candidate (`backend/variant`) its last call timed; undefined after an untimed call. */
  private readonly lastTimed = new Map<string, string | undefined>();
  /** Whose turn it is per routing key while it explores (see `decide`). */
  private readonly turns = new Map<string, Turn>();
  /** Per routing key, the candidates whose trial has been run again (see RETRIAL_FACTOR). */
  private readonly retried = new Map<string, Set<string>>();
  /** Routing keys whose trials ended in a close race, while it is run again back to back (see confirmStep). */
  private readonly confirming = new Map<string, Confirmation>();
  /**
   * Routing keys whose cached choice was a close race, run again in this process: the cached
   * trials, merged with this process's when the race ends (see mergeRerace). Once per key and process.
   */
  private readonly reraces = new Map<string, Readonly<Record<string, Trial>>>();
  /** Settled routing keys: measured here, or read from the cache. */
  private readonly settled = new Map<string, MeasuredChoice & { readonly cached: boolean }>();
  /** Routed calls holding each backend, from before its start to the call's end: such a backend is never released. */
  private readonly busy = new Map<BackendName, number>();
  /** In-process calibrations running (they use the backends they start). */
  private calibrationsRunning = 0;
  /** Disposals of backends released while the router lives (dispose waits for them). */
  private readonly releasing: Promise<void>[] = [];
  private fileRead: Promise<CacheRead> | undefined;
  private writes: Promise<void> = Promise.resolve();
  /**
   * Bumped whenever something `rank` or `choose` reads changes: the model, the settled choices,
   * a backend started, failed to start or released. A kept route is reused only within one epoch.
   */
  private epoch = 0;
  /** Per settled routing key, its last call's route, reused by calls of the same size (see `keptRoute`). */
  private readonly keptRoutes = new Map<string, KeptRoute>();

  /** True from the moment dispose() is called. */
  get disposed(): boolean {
    return this.disposedFlag;
  }

  constructor(private readonly o: RouterOptions) {
    this.model = { backends: { ...(o.costModel?.backends ?? {}) } };
    this.started.set(o.fallback.name, Promise.resolve({ status: 'ok', backend: o.fallback.backend, startMs: o.fallback.startMs ?? 0 }));
  }

  get costModel(): CostModel {
    return this.model;
  }

  get cachePath(): string {
    return this.o.cachePath ?? defaultCalibrationPath();
  }

  /** Backends running now. */
  async startedNames(): Promise<BackendName[]> {
    const out: BackendName[] = [];
    for (const [name, s] of this.started) if ((await s).status === 'ok') out.push(name);
    return out;
  }

  /** Backend.warmUp on every backend running now (those that have one), together. */
  async warmUp(): Promise<void> {
    if (this.disposedFlag) throw new DisposedError('kernelkit');
    const running = await Promise.all([...this.started.values()]);
    await Promise.all(running.flatMap((s) => (s.status === 'ok' && s.backend.warmUp !== undefined ? [s.backend.warmUp()] : [])));
  }

  /** Variant names of `op` over every candidate known (the fallback's first). */
  variants(op: OpName): readonly string[] {
    const names = new Set(this.o.fallback.backend.variants(op));
    for (const c of this.o.candidates) for (const v of this.model.backends[c.name]?.variants[op] ?? []) names.add(v);
    return [...names];
  }

  private skip(backend: BackendName, reason: string): void {
    if (!this.skipped.some((s) => s.backend === backend && s.reason === reason)) this.skipped.push({ backend, reason });
  }

  private start(name: BackendName): Promise<Started> {
    let s = this.started.get(name);
    if (s === undefined) {
      const load = this.o.candidates.find((c) => c.name === name)?.load ?? {};
      const t0 = performance.now();
      s = this.o.loaders[name](load).then(
        (backend): Started => {
          this.epoch++;
          return { status: 'ok', backend, startMs: performance.now() - t0 };
        },
        (err: unknown): Started => {
          this.epoch++;
          this.skip(name, errorMessage(err));
          return { status: 'failed', reason: errorMessage(err) };
        },
      );
      this.started.set(name, s);
      this.epoch++;
    }
    return s;
  }

  /** The cache key of a candidate (undefined, after recording why, when it cannot run here). */
  private async keyOf(c: Candidate): Promise<string | undefined> {
    let found = this.keys.get(c.name);
    if (found === undefined) {
      found = backendKey(c, this.o.loaders);
      this.keys.set(c.name, found);
    }
    const k = await found;
    if ('skip' in k) {
      this.skip(c.name, k.skip);
      return undefined;
    }
    return k.key;
  }

  /**
   * Measured choices are kept in the cache file: always with a calibrated model, and with an
   * injected one only when a cache path was given (a model measured elsewhere has no file of its own).
   */
  private get persistChoices(): boolean {
    return this.o.costModel === undefined || this.o.cachePath !== undefined;
  }

  /** The cache file as first read (one read for the fits and the measured choices). */
  private readFile(): Promise<CacheRead> {
    this.fileRead ??= readCalibrationCache(this.cachePath);
    return this.fileRead;
  }

  /** Reads the cache once: the entries for this machine and these backends join the model. */
  private loadCache(): Promise<string | undefined> {
    this.cacheLoaded ??= (async () => {
      const { file, note } = await this.readFile();
      for (const c of this.o.candidates) {
        if (this.model.backends[c.name] !== undefined) continue;
        const key = await this.keyOf(c);
        const cost = key === undefined ? undefined : cachedBackend(file, this.machine, key);
        if (cost !== undefined) this.model.backends[c.name] = cost;
      }
      this.epoch++;
      return note;
    })();
    return this.cacheLoaded;
  }

  /** Makes sure every usable candidate has a fit (or a recorded failure) for `op`; returns a note when it measured. */
  private ensureCalibrated(op: OpName): Promise<string | undefined> {
    if (this.o.costModel !== undefined) return Promise.resolve(undefined);
    let p = this.calibrating.get(op);
    if (p === undefined) {
      p = this.calibrateOp(op);
      this.calibrating.set(op, p);
    }
    return p;
  }

  private async calibrateOp(op: OpName): Promise<string | undefined> {
    const cacheNote = await this.loadCache();
    // A child stopped at its time limit would most likely hang again (a backend that never answers).
    if (this.childTimedOut !== undefined) return `${op} not calibrated: ${this.childTimedOut} earlier in this process`;
    const report = await this.calibrate({ ops: [op], budgetMs: this.o.calibrationBudgetMs ?? 10_000, force: false });
    if (report.backends.length === 0) return report.skipped.length ? `calibration of ${op} left out: ${report.skipped.join('; ')}` : cacheNote;
    const cut = report.skipped.length ? `; left out: ${report.skipped.join('; ')}` : '';
    return `calibrated ${op} on ${report.backends.join(', ')} in ${(report.ms / 1000).toFixed(1)} s (first use on this machine, budget ${(report.budgetMs / 1000).toFixed(0)} s; ${report.saved})${cut}`;
  }

  /**
   * Measures `ops` on every usable candidate (starting it) that has no fit for them yet, or on
   * all with `force`, and saves the result in the cache file.
   */
  async calibrate(o: CalibrateRequest): Promise<CalibrationReport> {
    const report = await this.calibrateSomewhere(o);
    this.epoch++;
    if (o.force) await this.forgetChoices();
    return report;
  }

  private async calibrateSomewhere(o: CalibrateRequest): Promise<CalibrationReport> {
    if (this.o.calibrateInChild !== undefined && (o.force || (await this.missingFits(o.ops)))) {
      try {
        return await this.calibrateInChild(o, this.o.calibrateInChild);
      } catch (err) {
        // Calibrating here instead would take as long again: the op routes without fits.
        if (err instanceof CalibrationTimeoutError) {
          this.childTimedOut = err.message;
          process.emitWarning(`${err.message}; ${o.ops.join(', ')} routed to the default backend in this process`, { code: 'KERNELKIT_CALIBRATION_CHILD' });
          return { backends: [], ms: err.limitMs, budgetMs: o.budgetMs, skipped: [err.message], saved: 'nothing saved', path: this.cachePath, model: this.costModel };
        }
        process.emitWarning(`calibration in a child process failed (${errorMessage(err)}); calibrating in this process`, { code: 'KERNELKIT_CALIBRATION_CHILD' });
      }
    }
    return this.calibrateHere(o);
  }

  /** After a forced calibration the measured choices were made on the old measurements: every key explores again. */
  private async forgetChoices(): Promise<void> {
    this.settled.clear();
    this.keptRoutes.clear();
    this.epoch++;
    this.trials.clear();
    this.turns.clear();
    this.retried.clear();
    this.confirming.clear();
    if (!this.persistChoices) return;
    await this.writes;
    try {
      await clearMeasuredChoices(this.cachePath, this.machine);
    } catch (err) {
      process.emitWarning(`calibration cache ${this.cachePath}: measured choices not cleared: ${errorMessage(err)}`, { code: 'KERNELKIT_CALIBRATION_CACHE' });
    }
    // The first read held the old choices.
    this.fileRead = undefined;
  }

  /** True when a candidate that can run here has no fit for one of `ops` (cache read first). */
  private async missingFits(ops: readonly OpName[]): Promise<boolean> {
    await this.loadCache();
    for (const c of this.o.candidates) {
      if (this.unstartable.has(c.name) || (await this.keyOf(c)) === undefined) continue;
      if (!ops.every((op) => this.model.backends[c.name]?.ops[op] !== undefined)) return true;
    }
    return false;
  }

  /** Runs calibrate-child.js, then takes the fits it saved from the cache file. */
  private async calibrateInChild(o: CalibrateRequest, load: { readonly threads?: number; readonly adapter?: AdapterKind }): Promise<CalibrationReport> {
    const script = fileURLToPath(CHILD_SCRIPT);
    if (!existsSync(script)) throw new Error(`${script} is missing (run npm run build)`);
    const t0 = performance.now();
    const request: ChildRequest = { cachePath: this.cachePath, ops: o.ops, budgetMs: o.budgetMs, force: o.force, ...load };
    const onProgress = o.onProgress ?? this.o.onCalibrationProgress;
    const report = await runCalibrationChild(script, request, o.budgetMs + CHILD_GRACE_MS, onProgress);
    for (const s of report.skippedBackends) {
      const name = s.backend as BackendName;
      this.skip(name, s.reason);
      // Not measured, and asking the child again for the next op would not change that.
      this.unstartable.add(name);
    }
    const measured = report.report.backends;
    const { file } = await readCalibrationCache(this.cachePath);
    for (const c of this.o.candidates) {
      const key = await this.keyOf(c);
      const cost = key === undefined ? undefined : cachedBackend(file, this.machine, key);
      if (cost !== undefined && (measured.includes(c.name) || this.model.backends[c.name] === undefined)) this.model.backends[c.name] = cost;
      else if (measured.includes(c.name)) throw new Error(`the child measured ${c.name} but the cache has no entry for it (${report.report.saved})`);
    }
    return {
      backends: measured, ms: performance.now() - t0, budgetMs: o.budgetMs, skipped: report.report.skipped, saved: `${report.report.saved}, in a child process`, path: this.cachePath, model: this.costModel,
    };
  }

  private async calibrateHere(o: CalibrateRequest): Promise<CalibrationReport> {
    this.calibrationsRunning++;
    try {
      return await this.calibrateHereNow(o);
    } finally {
      this.calibrationsRunning--;
    }
  }

  private async calibrateHereNow(o: CalibrateRequest): Promise<CalibrationReport> {
    if (!o.force) await this.loadCache();
    const targets = [];
    for (const c of this.o.candidates) {
      const key = await this.keyOf(c);
      const have = this.model.backends[c.name];
      if (key === undefined || (!o.force && o.ops.every((op) => have?.ops[op] !== undefined))) continue;
      const s = await this.start(c.name);
      if (s.status === 'ok') targets.push({ name: c.name, key, backend: s.backend, startMs: s.startMs });
    }
    const measureTransfers = o.force || targets.some((t) => this.model.backends[t.name] === undefined);
    const onProgress = o.onProgress ?? this.o.onCalibrationProgress;
    const run = targets.length === 0 ? undefined : await calibrate(targets, { ops: o.ops, transfers: measureTransfers, budgetMs: o.budgetMs, ...(onProgress ? { onProgress } : {}) });
    const costs: BackendCost[] = [];
    for (const t of targets) {
      const r = run!.results.get(t.name)!;
      const prev = o.force ? undefined : this.model.backends[t.name];
      // An op that got no sample is stored empty: measured, and not a candidate for it.
      const ops = { ...(prev?.ops ?? {}) };
      for (const op of o.ops) ops[op] = r.ops[op] ?? {};
      const cost: BackendCost = {
        key: t.key,
        description: t.backend.info.description,
        software: t.backend.info.software,
        startMs: prev?.startMs ?? t.startMs,
        upload: r.upload ?? prev?.upload ?? { fixedMs: 0, msPerByte: 0 },
        download: r.download ?? prev?.download ?? { fixedMs: 0, msPerByte: 0 },
        variants: Object.fromEntries(OP_NAMES.map((op) => [op, t.backend.variants(op)])) as BackendCost['variants'],
        ops,
      };
      this.model.backends[t.name] = cost;
      costs.push(cost);
    }
    let saved = 'nothing to save';
    if (costs.length > 0) {
      try {
        await writeCalibrationCache(this.cachePath, this.machine, costs);
        saved = `saved in ${this.cachePath}`;
      } catch (err) {
        saved = `not saved (${errorMessage(err)})`;
        process.emitWarning(`calibration cache ${this.cachePath} not written: ${errorMessage(err)}`, { code: 'KERNELKIT_CALIBRATION_CACHE' });
      }
    }
    return { backends: targets.map((t) => t.name), ms: run?.ms ?? 0, budgetMs: o.budgetMs, skipped: run?.skipped ?? [], saved, path: this.cachePath, model: this.costModel };
  }

  /**
   * Every candidate's prediction for `shape`, fastest first: per backend, the `pinned` variant
   * when given, else `preferred` where the backend has it, else each variant it routes
   * (routedVariants: those calibration measured and its `auto`).
   */
  async rank(shape: CallShape, pinned: string | undefined, preferred?: string): Promise<Pick[]> {
    const picks: Pick[] = [];
    for (const c of this.o.candidates) {
      const cost = this.model.backends[c.name];
      if (cost === undefined) continue;
      const state = this.started.get(c.name);
      const s = state === undefined ? undefined : await state;
      if (s?.status === 'failed') continue;
      const known = cost.variants[shape.op] ?? [];
      const one = pinned ?? (preferred !== undefined && known.includes(preferred) ? preferred : undefined);
      const variants = one === undefined ? routedVariants(cost, shape.op) : known.includes(one) ? [one] : [];
      for (const v of variants) {
        const fit = opCostOf(cost, shape.op, v);
        if (fit === undefined) continue;
        const running = predictMs(this.model, c.name, cost, fit.cost.fit, shape, true);
        const startMs = s === undefined ? cost.startMs : 0;
        picks.push({ name: c.name, variant: v, predictedMs: running + startMs, startMs });
      }
    }
    return picks.sort((a, b) => a.predictedMs - b.predictedMs);
  }

  /**
   * Runs `op` on the backend predicted fastest; the result carries `route` and a note saying why.
   * A call made before `dispose()` finishes (dispose waits for it), as on a single backend.
   */
  run<D>(op: OpName, args: unknown, options: Record<string, unknown> | undefined, defaultVariant: string | undefined): Promise<Result<D> & { readonly route: RouteInfo }> {
    if (this.disposedFlag) return Promise.reject(new DisposedError('kernelkit'));
    // As on one backend: a device result cannot outlive the backends, so it is not handed out.
    const call = this.route<D>(op, args, options, defaultVariant).then((r) => {
      if (this.disposedFlag && isDeviceArray(r.data)) {
        r.data.dispose();
        throw new DisposedError(r.backend);
      }
      return r;
    });
    this.inFlight.add(call);
    const forget = (): void => void this.inFlight.delete(call);
    call.then(forget, forget);
    return call;
  }

  private readonly inFlight = new Set<Promise<unknown>>();

  /** The candidate set measured choices are filed under: the cache keys of the backends with a model. */
  private candidateSetKey(): string {
    return candidateSet(this.o.candidates.flatMap((c) => this.model.backends[c.name]?.key ?? []));
  }

  /** The key's settled choice: measured in this process, or from the cache file. */
  private async settledChoice(key: string): Promise<(MeasuredChoice & { readonly cached: boolean }) | undefined> {
    const own = this.settled.get(key);
    if (own !== undefined || !this.persistChoices) return own;
    const c = cachedChoices((await this.readFile()).file, this.machine, this.candidateSetKey())[key];
    if (c === undefined) return undefined;
    const s = { ...c, cached: true };
    this.settled.set(key, s);
    return s;
  }

  /** Saves a settled key in the cache file; writes are queued so two settling at once both land. */
  private saveChoice(key: string, choice: MeasuredChoice): void {
    if (!this.persistChoices) return;
    const set = this.candidateSetKey();
    this.writes = this.writes
      .then(() => writeMeasuredChoices(this.cachePath, this.machine, set, { [key]: choice }))
      .catch((err: unknown) => void process.emitWarning(`calibration cache ${this.cachePath}: measured choice not saved: ${errorMessage(err)}`, { code: 'KERNELKIT_CALIBRATION_CACHE' }));
  }

  /** Where this call goes and why, before the call (trial times are added after it). */
  private async choose(shape: CallShape, all: readonly Pick[], key: string, outGiven: boolean, timed: boolean): Promise<Chosen> {
    const ranked = worthExploring(all, this.model);
    const best = ranked[0]!;
    const explore = this.o.explore;
    if (explore === undefined) return { pick: best, choice: 'predicted' };
    let confirming = this.confirming.get(key);
    if (confirming === undefined) {
      const settled = await this.settledChoice(key);
      const kept = settled === undefined ? undefined : ranked.find((p) => p.name === settled.backend && p.variant === settled.variant);
      if (settled !== undefined && kept !== undefined) {
        // A close race read from the cache is run again once in this process (the winner's calls
        // back to back cost nothing; the runner-up's only while within closeRace): one process's
        // slow phase must not fix a key's backend on this machine for good. Not by a timed call (below).
        const runnerUp = !timed && settled.cached && !this.reraces.has(key) ? closeRunnerUp(settled, shape.work, explore) : undefined;
        if (runnerUp === undefined || !ranked.some((p) => pickName(p) === runnerUp)) return { pick: kept, choice: 'measured', measured: settled };
        this.reraces.set(key, settled.trials);
        this.settled.delete(key);
        this.trials.set(key, new Map(Object.entries(settled.trials).map(([name, t]) => [name, { ...t, samples: [], timedMs: 0 }])));
        this.confirming.set(key, (confirming = { winner: pickName(kept), runnerUp }));
      }
    }
    // A call asking for `timing` pays costs an untimed call does not (WebGPU: a clock spin before
    // each pass), so while the key is unsettled it runs the prediction's pick and times nothing.
    if (timed) return { pick: best, choice: 'predicted', timedWhileExploring: true };
    let trials = this.trials.get(key);
    if (trials === undefined) this.trials.set(key, (trials = new Map()));
    if (confirming !== undefined) {
      const step = confirmStep(confirming, trials, explore);
      const cached = this.reraces.get(key);
      const merged = step.kind === 'done' && cached !== undefined ? mergeRerace(cached, confirming, step.trials) : undefined;
      const pick = ranked.find((p) => pickName(p) === (merged?.name ?? step.name));
      if (step.kind !== 'done' && pick !== undefined) {
        // A race run again from the cache: each side warms up here first, as its trial had.
        const warm = cached === undefined || warmedUp(this.warmUps.get(`${pickName(pick)} ${key}`), warmUpCalls(shape, outGiven, resultsHeldBetweenCollections()));
        return warm ? { pick, choice: step.kind, step } : { pick, choice: 'warm-up' };
      }
      // A candidate that can no longer run (its backend failed to start) loses the race.
      const winner = step.kind === 'done' && pick !== undefined ? pick : ranked.find((p) => pickName(p) === confirming.winner);
      this.confirming.delete(key);
      if (winner !== undefined) return this.settle(key, winner, step.kind === 'done' ? (merged?.trials ?? step.trials) : trials);
    }
    const warmUps = new Map(ranked.flatMap((p) => {
      const fastest = this.warmUps.get(`${pickName(p)} ${key}`)?.fastest;
      return fastest === undefined ? [] : [[pickName(p), fastest] as const];
    }));
    const d = decide(ranked, trials, shape.work, explore, this.turns.get(key), warmUps, this.retried.get(key))!;
    if (d.kind === 'explore') {
      if (d.retrial === true) {
        const dropped = trials.get(pickName(d.pick))!;
        trials.delete(pickName(d.pick));
        let retried = this.retried.get(key);
        if (retried === undefined) this.retried.set(key, (retried = new Set()));
        retried.add(pickName(d.pick));
        return { pick: d.pick, choice: 'trial', retrialOf: dropped };
      }
      const needed = warmUpCalls(shape, outGiven, resultsHeldBetweenCollections());
      return { pick: d.pick, choice: warmedUp(this.warmUps.get(`${pickName(d.pick)} ${key}`), needed) ? 'trial' : 'warm-up' };
    }
    if (d.kind === 'predicted') return { pick: d.pick, choice: 'predicted' };
    const runnerUp = confirming === undefined ? closeRunnerUp(d.choice, shape.work, explore) : undefined;
    if (runnerUp !== undefined && ranked.some((p) => pickName(p) === runnerUp)) {
      const c: Confirmation = { winner: pickName(d.pick), runnerUp };
      this.confirming.set(key, c);
      return { pick: d.pick, choice: 'confirm', step: confirmStep(c, trials, explore) };
    }
    return this.settle(key, d.pick, trials);
  }

  /** Settles `key` on `pick` with these trials, and saves the choice. */
  private settle(key: string, pick: Pick, trials: ReadonlyMap<string, Trial>): Chosen {
    const measured: MeasuredChoice = { backend: pick.name, variant: pick.variant, trials: Object.fromEntries([...trials].map(([name, t]) => [name, trialOf(t)])) };
    const choice = { ...measured, cached: false };
    this.settled.set(key, choice);
    this.saveChoice(key, measured);
    return { pick, choice: 'measured', measured: choice };
  }

  private async route<D>(op: OpName, args: unknown, options: Record<string, unknown> | undefined, defaultVariant: string | undefined): Promise<Result<D> & { readonly route: RouteInfo }> {
    // Read once: routing and the backend see the same values. The validated problem is passed on
    // as the args (the backend takes it without reading the caller's object again), and the
    // options are a shallow snapshot (getters run once).
    const problem: unknown = OPS[op].validate(args as never);
    const opts: Record<string, unknown> | undefined = typeof options === 'object' && options !== null ? { ...options } : options;
    const shape = callShape(op, problem, opts?.['output'] === 'device' ? 'device' : 'array');
    const beforeCalibration = await this.smallBeforeCalibration(op, shape);
    const calibrationNote = beforeCalibration ? undefined : await this.ensureCalibrated(op);
    const pinned = typeof opts?.['variant'] === 'string' ? (opts['variant'] as string) : undefined;
    const key = routingKey(shape, pinned);
    const size = `${shape.work} ${shape.passes} ${shape.inputBytes} ${shape.outputBytes}`;
    for (;;) {
      const kept = beforeCalibration ? undefined : this.keptRoute(key, size);
      const ranked = kept === undefined && !beforeCalibration ? await this.rank(shape, pinned, defaultVariant) : [];
      let pick: { name: BackendName; variant: string | undefined };
      let chosen: Awaited<ReturnType<Router['choose']>> | undefined;
      if (kept !== undefined) {
        pick = kept.pick;
      } else if (ranked.length === 0) {
        // The kernels-wide default variant applies where the backend has it, as with one backend.
        const b = this.o.fallback.backend;
        pick = { name: this.o.fallback.name, variant: pinned ?? (defaultVariant !== undefined && b.variants(op).includes(defaultVariant) ? defaultVariant : undefined) };
      } else {
        chosen = await this.choose(shape, ranked, key, opts?.['out'] !== undefined, opts?.['timing'] === true);
        pick = chosen.pick;
      }
      this.busy.set(pick.name, (this.busy.get(pick.name) ?? 0) + 1);
      let r: Result<D>;
      let ms: number;
      try {
        const s = await this.start(pick.name);
        if (s.status === 'failed') continue; // rank() now leaves it out
        const b = s.backend;
        const call = b[op] as unknown as (a: unknown, o: unknown) => Promise<Result<D>>;
        const timedTurn = chosen === undefined ? undefined : timedTurnOf(chosen.choice, `${pick.name}/${pick.variant}`);
        // A warm-up that fails (a lost device) leaves the call to report its own error.
        if (timedTurn !== undefined && this.lastTimed.get(key) !== timedTurn) await b.warmUp?.().catch(() => {});
        this.lastTimed.set(key, timedTurn);
        const t0 = performance.now();
        r = await call.call(b, problem, pick.variant === undefined ? opts : { ...opts, variant: pick.variant });
        ms = performance.now() - t0;
      } finally {
        this.busy.set(pick.name, this.busy.get(pick.name)! - 1);
      }
      let route: RouteInfo;
      let note: string;
      if (kept !== undefined) {
        ({ route, note } = kept);
      } else {
        route = chosen === undefined ? this.defaultRoute(op, pinned, pick.name, r.variant, beforeCalibration ? shape.work : undefined) : this.routeInfo(shape, key, ranked, chosen, ms);
        note = formatRoute(route);
        if (route.choice === 'measured') {
          this.releaseIdle();
          // After releaseIdle: what it released bumped the epoch this route is kept under.
          this.keptRoutes.set(key, { size, epoch: this.epoch, pick: chosen!.pick, route: freezeRoute(route), note });
        }
        // Any call but a warm-up leaves the candidate warm at this key, as its trial would find it.
        const name = `${pick.name}/${pick.variant} ${key}`;
        const w = this.warmUps.get(name);
        if (route.choice === 'warm-up') {
          const fastest = w?.fastest !== undefined && w.fastest.ms * shape.work <= ms * w.fastest.work ? w.fastest : { ms, work: shape.work };
          this.warmUps.set(name, { calls: (w?.calls ?? 0) + 1, ms: (w?.ms ?? 0) + ms, fastest });
        } else this.warmUps.set(name, { ...w, calls: Number.POSITIVE_INFINITY, ms: w?.ms ?? 0 });
      }
      const notes = [note, ...(calibrationNote !== undefined && !this.noted.has(op) ? [calibrationNote] : []), ...(r.notes ?? [])];
      if (calibrationNote !== undefined) this.noted.add(op);
      return { ...r, notes, route };
    }
  }

  /**
   * The route a settled key's last call took, when this call has its size and nothing `rank` or
   * `choose` read has changed since: ranking again would give the same pick, prediction and note.
   */
  private keptRoute(key: string, size: string): KeptRoute | undefined {
    const k = this.keptRoutes.get(key);
    return k !== undefined && k.epoch === this.epoch && k.size === size && this.settled.has(key) ? k : undefined;
  }

  /** A call that skipped `op`'s first calibration (see UNCALIBRATED_MAX_WORK) until its op has one. */
  private async smallBeforeCalibration(op: OpName, shape: CallShape): Promise<boolean> {
    if (shape.work > UNCALIBRATED_MAX_WORK || shape.input.kind !== 'host' || shape.output !== 'array') return false;
    if (this.o.costModel !== undefined || this.calibrating.has(op)) return false;
    return this.missingFits([op]);
  }

  /** `smallWork`: the work of a call that ran before its op's first calibration. */
  private defaultRoute(op: OpName, pinned: string | undefined, name: BackendName, variant: string, smallWork?: number): RouteInfo {
    const reason =
      smallWork !== undefined
        ? `a call of ${smallWork} work units (at most ${UNCALIBRATED_MAX_WORK}) runs on the default backend before ${op} is calibrated: no backend could save more than about a millisecond on it; the first larger call calibrates ${op}`
        : `no prediction for ${op}${pinned ? ` with variant ${pinned}` : ''}: ran on the default backend`;
    return { mode: 'auto', backend: name, variant, reason, choice: 'default', settled: true };
  }

  /** The route of a call that ran `chosen.pick` in `ms`; a trial's time is recorded for its key here. */
  private routeInfo(shape: CallShape, key: string, ranked: readonly Pick[], chosen: Chosen, ms: number): RouteInfo {
    const { pick, choice } = chosen;
    const base = { mode: 'auto' as const, backend: pick.name, variant: pick.variant, predictedMs: pick.predictedMs, key, candidates: ranked.length, choice };
    const msOf = (t: Readonly<Record<string, Trial>>): Record<string, number> => Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v.ms]));
    const callsOf = (t: Readonly<Record<string, Trial>>): Record<string, number> => Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v.calls]));
    if (choice === 'measured') {
      const trials = chosen.measured!.trials;
      const own = trials[pickName(pick)];
      const other = ranked.filter((p) => pickName(p) !== pickName(pick) && trials[pickName(p)] !== undefined).sort((a, b) => trials[pickName(a)]!.ms / trials[pickName(a)]!.work - trials[pickName(b)]!.ms / trials[pickName(b)]!.work)[0];
      const n = Object.keys(trials).length;
      // The runner-up measured faster: a worker pool that did not clear POOL_MARGIN.
      const poolHandicapped = other !== undefined && own !== undefined && scaledMs(trials[pickName(other)]!, own.work) < own.ms;
      const fastest = poolHandicapped
        ? `fastest measured of ${n} candidates for this op and size band once a worker pool's times under ${POOL_MARGIN_MAX_MS} ms count ${POOL_MARGIN}× (it must beat the others by that much to hold every core)`
        : `fastest measured of ${n} candidate${n === 1 ? '' : 's'} for this op and size band`;
      return {
        ...base, settled: true, trials: msOf(trials), trialCalls: callsOf(trials),
        ...(own === undefined ? {} : { measuredMs: own.ms }),
        ...(other === undefined ? {} : { runnerUp: { backend: other.name, variant: other.variant, predictedMs: other.predictedMs, measuredMs: trials[pickName(other)]!.ms } }),
        reason: `${fastest}${chosen.measured!.cached ? ' (measured choice from the cache)' : ''}`,
      };
    }
    const next = ranked.find((p) => pickName(p) !== pickName(pick));
    const runnerUp = next === undefined ? {} : { runnerUp: { backend: next.name, variant: next.variant, predictedMs: next.predictedMs } };
    if (choice === 'predicted' && chosen.timedWhileExploring === true) {
      return { ...base, ...runnerUp, settled: false, reason: 'lowest predicted end-to-end time: a call with `timing` while this op and size band is still being measured, left out of its trials (timing adds costs an untimed call does not pay)' };
    }
    if (choice === 'predicted') return { ...base, ...runnerUp, settled: true, reason: 'lowest predicted end-to-end time' };
    const trials = this.trials.get(key)!;
    if (chosen.step !== undefined && chosen.step.kind !== 'done') {
      // A concurrent call of the key may have settled the race meanwhile: this one is then not recorded.
      const before = this.confirming.get(key);
      const c = before === undefined ? undefined : confirmCall(before, chosen.step, ms, shape.work);
      if (c !== undefined) this.confirming.set(key, c);
      const confirm = chosen.step.kind === 'confirm';
      const own = c === undefined ? undefined : confirmSide(c, confirm ? 'winner' : 'runnerUp');
      const timed = chosen.step.timed;
      const shown = { ...Object.fromEntries(trials), ...(own === undefined ? {} : { [pickName(pick)]: own }) };
      const other = c === undefined ? 'another candidate' : confirm ? c.runnerUp : c.winner;
      return {
        ...base, settled: false, trials: msOf(shown), trialCalls: callsOf(shown),
        ...(timed ? { measuredMs: ms } : {}),
        reason: `a close race with ${other}${this.reraces.has(key) ? ' (a measured choice from the cache, run again in this process)' : ''}: ${confirm ? 'the fastest measured' : 'the runner-up'}, ${
          timed ? 'timed back to back in blocks alternating with the other before the key settles' : 'woken by an untimed call before its next calls back to back'
        }`,
      };
    }
    if (choice === 'trial') trials.set(pickName(pick), addTrialCall(trials.get(pickName(pick)), ms, shape.work));
    this.turns.set(key, nextTurn(this.turns.get(key), pickName(pick), choice === 'trial' ? ms : undefined));
    const tried = Object.fromEntries(trials);
    return {
      ...base, ...runnerUp, settled: false, trials: msOf(tried), trialCalls: callsOf(tried),
      ...(choice === 'trial' ? { measuredMs: ms } : {}),
      reason: chosen.retrialOf !== undefined
        ? `a trial run again: its first measured ${ms1(chosen.retrialOf.ms)} over ${chosen.retrialOf.calls} call${chosen.retrialOf.calls === 1 ? '' : 's'}, over ${RETRIAL_FACTOR}× its predicted ${ms1(pick.predictedMs - pick.startMs)} (a stall is likelier than its speed)`
        : choice === 'trial'
        ? 'a trial: candidates predicted near the best take turns, each timed on calls adding up to a minimum time'
        : `a warm-up: the candidate's first call of this key here (calls, while its results are still fresh memory), ${this.reraces.has(key) ? 'before a close race from the cache is run again' : 'not timed as its trial'}`,
    };
  }

  private readonly noted = new Set<OpName>();

  private disposing: Promise<void> | undefined;

  dispose(): Promise<void> {
    this.disposedFlag = true;
    this.disposing ??= this.release();
    return this.disposing;
  }

  /**
   * Once every routing key seen here has settled, releases the backends no settled key runs on
   * (the default backend stays): idle backends left in the process slowed the chosen one's calls
   * on the H100 host (benchmarks/results/router-overhead-h100-2026-11-24-s2.txt). A later key
   * that needs one starts it again.
   */
  private releaseIdle(): void {
    if (this.disposedFlag || this.calibrationsRunning > 0) return;
    for (const key of this.trials.keys()) if (!this.settled.has(key)) return;
    const keep = new Set<BackendName>([this.o.fallback.name]);
    for (const c of this.settled.values()) keep.add(c.backend);
    for (const [name, state] of [...this.started]) {
      if (keep.has(name) || (this.busy.get(name) ?? 0) > 0) continue;
      this.started.delete(name);
      this.epoch++;
      this.releasing.push(state.then((s) => (s.status === 'ok' ? s.backend.dispose() : undefined)).catch(() => {}));
    }
  }

  private async release(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    await Promise.all(this.releasing);
    await this.writes;
    const all = await Promise.all(this.started.values());
    await Promise.all(all.flatMap((s) => (s.status === 'ok' ? [s.backend.dispose()] : [])));
  }
}

/**
 * The candidate a call times for its key (a trial, confirmation or rematch), else undefined. A
 * call that times a candidate the key's last call did not is the first of a run: the backend is
 * warmed up before it (Backend.warmUp), untimed, since a GPU idle through another candidate's
 * turn or its own warm-up's gaps runs a turn's short calls at lowered clocks, which calls back to
 * back, as a settled key's are, do not see.
 */
export function timedTurnOf(choice: RouteChoice, name: string): string | undefined {
  return choice === 'trial' || choice === 'confirm' || choice === 'rematch' ? name : undefined;
}

/**
 * The candidates a key explores: all, except software WebGPU (llvmpipe) where another candidate
 * is predicted at least as fast. Its calls detach ArrayBuffers (buffer mapping), after which V8
 * runs typed-array code in this process slower for good, a cost its own trial does not show.
 */
function worthExploring(ranked: readonly Pick[], model: CostModel): readonly Pick[] {
  const detaches = (p: Pick): boolean => p.name === 'webgpu' && model.backends.webgpu?.software === true;
  const bestOther = ranked.find((p) => !detaches(p));
  return bestOther === undefined ? ranked : ranked.filter((p) => !detaches(p) || p.predictedMs < bestOther.predictedMs);
}

/** Later calls hand out the same route object: frozen, with what it holds, so no caller changes another's. */
function freezeRoute(r: RouteInfo): RouteInfo {
  for (const part of [r.trials, r.trialCalls, r.runnerUp]) if (part !== undefined) Object.freeze(part);
  return Object.freeze(r);
}

/** A settled key's route, kept for the next calls of the same size (see Router.keptRoute). */
interface KeptRoute {
  readonly size: string;
  readonly epoch: number;
  readonly pick: Pick;
  readonly route: RouteInfo;
  readonly note: string;
}

/** What `choose` decided for one call; `step` for the calls of a close race's confirmation. */
interface Chosen {
  readonly pick: Pick;
  readonly choice: RouteChoice;
  readonly measured?: MeasuredChoice & { readonly cached?: boolean };
  readonly step?: ConfirmStep;
  /** A call with `timing` routed by prediction while its key explores (see choose). */
  readonly timedWhileExploring?: boolean;
  /** The first call of a trial run again: the trial it replaces (see RETRIAL_FACTOR). */
  readonly retrialOf?: Trial;
}

const ms1 = (x: number): string => `${x.toFixed(1)} ms`;

/**
 * The route as the result's first note, e.g. "routed to webgpu/auto: measured 79.0 ms (2 calls)
 * over 3 trials, runner-up piscina/wasm-simd 131.0 ms (2 calls)".
 */
export function formatRoute(r: RouteInfo): string {
  const head = `routed to ${r.backend}/${r.variant}`;
  const ru = r.runnerUp;
  const calls = (name: string): string => {
    const n = r.trialCalls?.[name];
    return n === undefined ? '' : ` (${n} call${n === 1 ? '' : 's'})`;
  };
  switch (r.choice) {
    case 'measured': {
      const n = Object.keys(r.trials ?? {}).length;
      const measured = r.measuredMs === undefined ? 'measured fastest' : `measured ${ms1(r.measuredMs)}${calls(`${r.backend}/${r.variant}`)}`;
      const runner = ru?.measuredMs === undefined ? '' : `, runner-up ${ru.backend}/${ru.variant} ${ms1(ru.measuredMs)}${calls(`${ru.backend}/${ru.variant}`)}`;
      return `${head}: ${measured} over ${n} trial${n === 1 ? '' : 's'}${runner}${r.reason.includes('cache') ? ' (from the cache)' : ''}`;
    }
    case 'confirm':
    case 'rematch': {
      const call = r.trialCalls?.[`${r.backend}/${r.variant}`];
      const timed = r.measuredMs === undefined ? 'untimed wake-up call' : `call ${call ?? '?'} back to back, measured ${ms1(r.measuredMs)}`;
      return `${head}: ${r.choice === 'confirm' ? 'confirming a close race' : 'rematch of a close race'}, ${timed}`;
    }
    case 'trial':
    case 'warm-up': {
      const call = r.trialCalls?.[`${r.backend}/${r.variant}`];
      const what =
        r.choice === 'trial'
          ? `trial call ${call ?? '?'}, measured ${ms1(r.measuredMs!)}, predicted ${ms1(r.predictedMs!)}`
          : `warm-up before its ${r.reason.includes('close race') ? 'close race is run again' : 'trial'}, predicted ${ms1(r.predictedMs!)}`;
      return `${head}: ${what} (exploring ${r.candidates} candidates, ${Object.keys(r.trials ?? {}).length} measured)`;
    }
    case 'predicted':
      return `${head}: predicted ${ms1(r.predictedMs!)}${ru?.predictedMs === undefined ? '' : `, runner-up ${ru.backend}/${ru.variant} ${ms1(ru.predictedMs)}`}`;
    default:
      return `${head}: ${r.reason}`;
  }
}
