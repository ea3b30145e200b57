import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DisposedError, type BackendFailure } from '@kernelkit/core';
import { isDeviceArray, OP_NAMES, OPS, type Backend, type BackendName, type OpName, type Result } from '@kernelkit/ops';
import type { BackendLoaders } from '../loaders.js';
import { backendKey, type Candidate } from './keys.js';
import { cachedBackend, defaultCalibrationPath, machineIdentity, readCalibrationCache, writeCalibrationCache, type MachineIdentity } from './cache.js';
import { calibrate, type CalibrationProgress } from './calibrate.js';
import type { ChildMessage, ChildRequest } from './calibrate-child.js';
import type { AdapterKind } from '../names.js';
import { callShape } from './call-shape.js';
import { opCostOf, predictMs, type BackendCost, type CallShape, type CostModel } from './cost-model.js';

/** Why a call ran where it did. */
export interface RouteInfo {
  /** 'auto': picked per call by predicted time; 'fixed': the one backend the options chose. */
  readonly mode: 'auto' | 'fixed';
  readonly backend: BackendName;
  readonly variant: string;
  /** Predicted end-to-end ms (start-up included when the backend was not running yet). */
  readonly predictedMs?: number;
  /** The fastest other backend and its prediction. */
  readonly runnerUp?: { readonly backend: BackendName; readonly variant: string; readonly predictedMs: number };
  readonly reason: string;
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
}

/** Built code only: from src/router (tests) and dist/router alike this is the compiled child. */
const CHILD_SCRIPT = new URL('../../dist/router/calibrate-child.js', import.meta.url);

type Started = { readonly status: 'ok'; readonly backend: Backend; readonly startMs: number } | { readonly status: 'failed'; readonly reason: string };

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

interface CalibrateRequest {
  readonly ops: readonly OpName[];
  readonly budgetMs: number;
  readonly force: boolean;
  readonly onProgress?: (p: CalibrationProgress) => void;
}

interface Pick {
  readonly name: BackendName;
  readonly variant: string;
  readonly predictedMs: number;
}

/**
 * Per-call routing over several backends. Each is started on the first call routed to it (or
 * when calibration needs it); `dispose` releases every one started.
 */
export class Router {
  readonly skipped: BackendFailure[] = [];
  private readonly started = new Map<BackendName, Promise<Started>>();
  private readonly keys = new Map<BackendName, string>();
  private model: { backends: Partial<Record<BackendName, BackendCost>> };
  private readonly calibrating = new Map<OpName, Promise<string | undefined>>();
  private readonly machine: MachineIdentity = machineIdentity();
  private cacheLoaded: Promise<string | undefined> | undefined;
  private disposedFlag = false;
  /** Backends that failed to start in a calibration child. */
  private readonly unstartable = new Set<BackendName>();

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
        (backend): Started => ({ status: 'ok', backend, startMs: performance.now() - t0 }),
        (err: unknown): Started => {
          this.skip(name, message(err));
          return { status: 'failed', reason: message(err) };
        },
      );
      this.started.set(name, s);
    }
    return s;
  }

  /** The cache key of a candidate (undefined, after recording why, when it cannot run here). */
  private async keyOf(c: Candidate): Promise<string | undefined> {
    const known = this.keys.get(c.name);
    if (known !== undefined) return known;
    const k = await backendKey(c, this.o.loaders);
    if ('skip' in k) {
      this.skip(c.name, k.skip);
      return undefined;
    }
    this.keys.set(c.name, k.key);
    return k.key;
  }

  /** Reads the cache once: the entries for this machine and these backends join the model. */
  private loadCache(): Promise<string | undefined> {
    this.cacheLoaded ??= (async () => {
      const { file, note } = await readCalibrationCache(this.cachePath);
      for (const c of this.o.candidates) {
        if (this.model.backends[c.name] !== undefined) continue;
        const key = await this.keyOf(c);
        const cost = key === undefined ? undefined : cachedBackend(file, this.machine, key);
        if (cost !== undefined) this.model.backends[c.name] = cost;
      }
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
    const report = await this.calibrate({ ops: [op], budgetMs: this.o.calibrationBudgetMs ?? 10_000, force: false });
    if (report.backends.length === 0) return cacheNote;
    const cut = report.skipped.length ? `; left out: ${report.skipped.join('; ')}` : '';
    return `calibrated ${op} on ${report.backends.join(', ')} in ${(report.ms / 1000).toFixed(1)} s (first use on this machine, budget ${(report.budgetMs / 1000).toFixed(0)} s; ${report.saved})${cut}`;
  }

  /**
   * Measures `ops` on every usable candidate (starting it) that has no fit for them yet, or on
   * all with `force`, and saves the result in the cache file.
   */
  async calibrate(o: CalibrateRequest): Promise<CalibrationReport> {
    if (this.o.calibrateInChild !== undefined && (o.force || (await this.missingFits(o.ops)))) {
      try {
        return await this.calibrateInChild(o, this.o.calibrateInChild);
      } catch (err) {
        process.emitWarning(`calibration in a child process failed (${message(err)}); calibrating in this process`, { code: 'KERNELKIT_CALIBRATION_CHILD' });
      }
    }
    return this.calibrateHere(o);
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
    const report = await new Promise<Extract<ChildMessage, { report: unknown }>>((resolve, reject) => {
      const child = spawn(process.execPath, [script, JSON.stringify(request)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let last: Extract<ChildMessage, { report: unknown }> | undefined;
      // Native libraries print notices on stderr: kept only to explain a failure.
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-2000)));
      createInterface({ input: child.stdout }).on('line', (line) => {
        let m: ChildMessage;
        try {
          m = JSON.parse(line) as ChildMessage;
        } catch {
          return;
        }
        if ('progress' in m) onProgress?.(m.progress);
        else last = m;
      });
      child.on('error', reject);
      child.on('close', (code) => (code === 0 && last !== undefined ? resolve(last) : reject(new Error(`exit code ${code}: ${stderr.trim().split('\n').slice(-3).join(' / ')}`))));
    });
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
        saved = `not saved (${message(err)})`;
        process.emitWarning(`calibration cache ${this.cachePath} not written: ${message(err)}`, { code: 'KERNELKIT_CALIBRATION_CACHE' });
      }
    }
    return { backends: targets.map((t) => t.name), ms: run?.ms ?? 0, budgetMs: o.budgetMs, skipped: run?.skipped ?? [], saved, path: this.cachePath, model: this.costModel };
  }

  /** Every candidate's prediction for `shape`, fastest first. */
  async rank(shape: CallShape, variant: string | undefined): Promise<Pick[]> {
    const picks: Pick[] = [];
    for (const c of this.o.candidates) {
      const cost = this.model.backends[c.name];
      if (cost === undefined) continue;
      const state = this.started.get(c.name);
      const s = state === undefined ? undefined : await state;
      if (s?.status === 'failed') continue;
      const known = cost.variants[shape.op] ?? [];
      const v = variant !== undefined && known.includes(variant) ? variant : variant === undefined ? known[0] : undefined;
      if (v === undefined) continue;
      const fit = opCostOf(cost, shape.op, v);
      if (fit === undefined) continue;
      picks.push({ name: c.name, variant: v, predictedMs: predictMs(this.model, c.name, cost, fit.cost.fit, shape, s !== undefined) });
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

  private async route<D>(op: OpName, args: unknown, options: Record<string, unknown> | undefined, defaultVariant: string | undefined): Promise<Result<D> & { readonly route: RouteInfo }> {
    // Read once: routing and the backend see the same values. The validated problem is passed on
    // as the args (the backend takes it without reading the caller's object again), and the
    // options are a shallow snapshot (getters run once).
    const problem: unknown = OPS[op].validate(args as never);
    const opts: Record<string, unknown> | undefined = typeof options === 'object' && options !== null ? { ...options } : options;
    const shape = callShape(op, problem, opts?.['output'] === 'device' ? 'device' : 'array');
    const calibrationNote = await this.ensureCalibrated(op);
    const pinned = typeof opts?.['variant'] === 'string' ? (opts['variant'] as string) : undefined;
    for (;;) {
      const ranked = await this.rank(shape, pinned);
      // The kernels-wide default variant applies where a backend has it, as with one backend.
      const best = ranked[0];
      let name: BackendName;
      let reason: string;
      if (best === undefined) {
        name = this.o.fallback.name;
        reason = `no prediction for ${op}${pinned ? ` with variant ${pinned}` : ''}: ran on the default backend`;
      } else {
        name = best.name;
        reason = 'lowest predicted end-to-end time';
      }
      const s = await this.start(name);
      if (s.status === 'failed') continue; // rank() now leaves it out
      const b = s.backend;
      const variant = pinned ?? (defaultVariant !== undefined && b.variants(op).includes(defaultVariant) ? defaultVariant : undefined);
      const call = b[op] as unknown as (a: unknown, o: unknown) => Promise<Result<D>>;
      const r = await call.call(b, problem, variant === undefined ? opts : { ...opts, variant });
      const runnerUp = ranked.find((p) => p.name !== name);
      const route: RouteInfo = {
        mode: 'auto',
        backend: name,
        variant: r.variant,
        ...(best !== undefined && best.name === name ? { predictedMs: best.predictedMs } : {}),
        ...(runnerUp !== undefined ? { runnerUp: { backend: runnerUp.name, variant: runnerUp.variant, predictedMs: runnerUp.predictedMs } } : {}),
        reason,
      };
      const line = `routed to ${name}/${r.variant}: ${route.predictedMs === undefined ? reason : `predicted ${route.predictedMs.toFixed(1)} ms`}${runnerUp ? `, runner-up ${runnerUp.name}/${runnerUp.variant} ${runnerUp.predictedMs.toFixed(1)} ms` : ''}`;
      const notes = [line, ...(calibrationNote !== undefined && !this.noted.has(op) ? [calibrationNote] : []), ...(r.notes ?? [])];
      this.noted.add(op);
      return { ...r, notes, route };
    }
  }

  private readonly noted = new Set<OpName>();

  private disposing: Promise<void> | undefined;

  dispose(): Promise<void> {
    this.disposedFlag = true;
    this.disposing ??= this.release();
    return this.disposing;
  }

  private async release(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    const all = await Promise.all(this.started.values());
    await Promise.all(all.flatMap((s) => (s.status === 'ok' ? [s.backend.dispose()] : [])));
  }
}
