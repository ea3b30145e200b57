import { assertFunction, assertInteger, assertObject, describeValue, InvalidArgumentError, median } from '@kernelkit/core';
import type { GpuDevice } from '../runtime/device.js';
import { readTuningCache, writeTuningCache, type TuneRecord } from './cache-file.js';

export interface TuneCandidate<C> {
  readonly name: string;
  readonly config: C;
}

export interface TuneChoice<C> {
  readonly candidate: TuneCandidate<C>;
  /** 'memory': tuned earlier in this process; 'disk': read from the cache file; 'sweep': measured now. */
  readonly source: 'memory' | 'disk' | 'sweep';
  /** Wall time the sweep took (source 'sweep' only). */
  readonly sweepMs?: number;
  /** Median ms per candidate name (source 'sweep' only). */
  readonly timings?: Readonly<Record<string, number>>;
  /** Cache-file trouble worth telling the caller (ignored corrupt file, failed write); absent when none. */
  readonly notes?: readonly string[];
}

export interface TunerOptions {
  /** JSON cache file; undefined = memory only. */
  readonly cachePath?: string | undefined;
  /** Timed runs per candidate, the median kept; default 3. */
  readonly runs?: number | undefined;
}

export const DEFAULT_TUNE_RUNS = 3;

// Names identify configs in the cache file, so a record whose config no longer matches the
// code's candidate of that name (the candidate set changed) is stale and re-swept.
const sameConfig = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

// A record swept over other candidates than the code offers now is stale too: a candidate added
// later (a new kernel) was never timed against the remembered winner.
const sameField = (record: TuneRecord, candidates: readonly TuneCandidate<unknown>[]): boolean => {
  const timed = Object.keys(record.timings);
  return timed.length === candidates.length && candidates.every((c) => Object.hasOwn(record.timings, c.name));
};

/**
 * Picks the fastest of a few candidate configs per key (op + shape class) by timing each on the
 * device, and remembers the winner in memory and, with `cachePath`, in a JSON file shared by
 * every adapter (records are filed under this tuner's adapter key).
 */
export class Tuner {
  readonly adapterKey: string;
  readonly cachePath: string | undefined;
  private readonly runs: number;
  private readonly records = new Map<string, { readonly record: TuneRecord; readonly source: 'memory' | 'disk' }>();
  private readonly inflight = new Map<string, Promise<TuneRecord>>();
  private loading: Promise<void> | undefined;
  /** Notes from reading the file, handed to the first choice made after it. */
  private pendingNotes: string[] = [];
  private writes: Promise<unknown> = Promise.resolve();

  constructor(adapterKey: string, options: TunerOptions = {}) {
    if (typeof adapterKey !== 'string' || adapterKey === '') throw new InvalidArgumentError('adapterKey', `must be a non-empty string, got ${describeValue(adapterKey)}`);
    assertObject(options, 'options');
    if (options.cachePath !== undefined && (typeof options.cachePath !== 'string' || options.cachePath === '')) {
      throw new InvalidArgumentError('options.cachePath', `must be a non-empty file path, got ${describeValue(options.cachePath)}`);
    }
    if (options.runs !== undefined) assertInteger(options.runs, 'options.runs', 1, 99);
    this.adapterKey = adapterKey;
    this.cachePath = options.cachePath;
    this.runs = options.runs ?? DEFAULT_TUNE_RUNS;
  }

  /**
   * The cached or freshly swept best candidate for `key` (op + shape class). `time(config)` runs
   * the candidate once on the GPU and resolves its ms; the tuner calls it `runs` times per
   * candidate, round-robin (so clock or thermal drift does not favour one candidate), one call at
   * a time, and keeps the median. Ties go to the earlier candidate. A rejection of `time`
   * rejects the pick and caches nothing: every candidate is meant to be a tested config.
   */
  async pick<C>(key: string, candidates: readonly TuneCandidate<C>[], time: (config: C) => Promise<number>): Promise<TuneChoice<C>> {
    if (typeof key !== 'string' || key === '') throw new InvalidArgumentError('key', `must be a non-empty string, got ${describeValue(key)}`);
    if (!Array.isArray(candidates as unknown) || candidates.length === 0) throw new InvalidArgumentError('candidates', 'must be a non-empty array');
    const names = new Set(candidates.map((c) => c.name));
    if (names.size !== candidates.length) throw new InvalidArgumentError('candidates', 'names must be unique (they key the cache)');
    assertFunction(time, 'time');
    await (this.loading ??= this.load());

    const hit = this.lookup(key, candidates);
    if (hit !== undefined) return this.withNotes({ candidate: hit.candidate, source: hit.source });
    // A concurrent pick of the same key is already sweeping: share its result.
    const running = this.inflight.get(key);
    if (running !== undefined) {
      const record = await running.catch(() => undefined);
      const c = record && candidates.find((x) => x.name === record.name && sameConfig(x.config, record.config));
      if (c !== undefined) return this.withNotes({ candidate: c, source: 'memory' });
    }
    const sweep = this.sweep(key, candidates, time);
    const shared = sweep.then((s) => s.record);
    shared.catch(() => {}); // a failed sweep rejects through `sweep`; the shared copy must not go unhandled
    this.inflight.set(key, shared);
    try {
      const s = await sweep;
      const notes = this.cachePath === undefined ? [] : await this.save(key, s.record);
      return this.withNotes({ candidate: s.best, source: 'sweep', sweepMs: s.sweepMs, timings: s.record.timings }, notes);
    } finally {
      this.inflight.delete(key);
    }
  }

  private lookup<C>(key: string, candidates: readonly TuneCandidate<C>[]): { candidate: TuneCandidate<C>; source: 'memory' | 'disk' } | undefined {
    const entry = this.records.get(key);
    if (entry === undefined) return undefined;
    if (!sameField(entry.record, candidates)) return undefined;
    const candidate = candidates.find((c) => c.name === entry.record.name && sameConfig(c.config, entry.record.config));
    return candidate === undefined ? undefined : { candidate, source: entry.source };
  }

  private async sweep<C>(key: string, candidates: readonly TuneCandidate<C>[], time: (config: C) => Promise<number>): Promise<{ best: TuneCandidate<C>; record: TuneRecord; sweepMs: number }> {
    const t0 = performance.now();
    const samples = candidates.map(() => [] as number[]);
    for (let run = 0; run < this.runs; run++) {
      for (let i = 0; i < candidates.length; i++) {
        const c = candidates[i]!;
        const ms = await time(c.config);
        if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
          throw new InvalidArgumentError('time', `resolved ${describeValue(ms)} for candidate ${c.name}; expected a duration in ms`);
        }
        samples[i]!.push(ms);
      }
    }
    const medians = samples.map(median);
    let best = 0;
    for (let i = 1; i < candidates.length; i++) if (medians[i]! < medians[best]!) best = i;
    const sweepMs = performance.now() - t0;
    const winner = candidates[best]!;
    const timings = Object.fromEntries(candidates.map((c, i) => [c.name, medians[i]!]));
    const record: TuneRecord = { name: winner.name, config: winner.config, timings, measuredAt: new Date().toISOString() };
    this.records.set(key, { record, source: 'memory' });
    return { best: winner, record, sweepMs };
  }

  /** Reads the cache file once; records of other adapters stay in the file untouched. */
  private async load(): Promise<void> {
    if (this.cachePath === undefined) return;
    const contents = await readTuningCache(this.cachePath);
    if (contents.note !== undefined) this.pendingNotes.push(contents.note);
    for (const [key, record] of Object.entries(contents.adapters[this.adapterKey] ?? {})) {
      if (!this.records.has(key)) this.records.set(key, { record, source: 'disk' });
    }
  }

  /** Writes one new record; writes are chained so two sweeps never race on the temp file. */
  private save(key: string, record: TuneRecord): Promise<string[]> {
    const path = this.cachePath!;
    const done = this.writes.then(() =>
      writeTuningCache(path, this.adapterKey, { [key]: record }).then(
        () => [],
        (e: unknown) => [`tuning cache ${path} not written: ${(e as Error).message}`],
      ),
    );
    this.writes = done;
    return done;
  }

  private withNotes<C>(choice: TuneChoice<C>, extra: readonly string[] = []): TuneChoice<C> {
    const notes = [...this.pendingNotes, ...extra];
    this.pendingNotes = [];
    return notes.length === 0 ? choice : { ...choice, notes };
  }
}

/** Identifies the adapter (and its driver, which Dawn puts in the description) for cache records. */
export function adapterKeyOf(gpu: GpuDevice): string {
  const device = (gpu.device as Partial<Pick<GPUDevice, 'adapterInfo'>>).adapterInfo?.device ?? '';
  return [gpu.info.vendor, gpu.info.architecture, device, gpu.info.description].map((s) => s || '-').join(' / ');
}

const tuners = new WeakMap<GpuDevice, Tuner>();

/** One Tuner per GpuDevice (WeakMap), keyed to the adapter's vendor/architecture/description; the first call's options win. */
export function tunerFor(gpu: GpuDevice, options?: TunerOptions): Tuner {
  let t = tuners.get(gpu);
  if (t === undefined) {
    t = new Tuner(adapterKeyOf(gpu), options);
    tuners.set(gpu, t);
  }
  return t;
}

/**
 * Devices of one adapter (option `devices`) share the first one's Tuner: the shards of a sharded
 * `auto` call then wait for one sweep and run the same pick, as one device would.
 */
export function shareTuners(devices: readonly GpuDevice[], options?: TunerOptions): void {
  for (const gpu of devices) {
    const first = devices.find((d) => adapterKeyOf(d) === adapterKeyOf(gpu))!;
    tuners.set(gpu, tunerFor(first, options));
  }
}
