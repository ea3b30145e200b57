import v8 from 'node:v8';
import { it } from 'vitest';
import { assertInteger, assertObject, describeValue, InvalidArgumentError } from '@kernelkit/core';
import type { Backend, OpName } from '../backend.js';
import { verifyResult } from '../verify.js';
import { conv2dCase, convLayerCase, GRID_CASES, scanCase, stencilCase } from './cases.js';
import { lifetimeCyclesFromEnv } from './env.js';
import { gcFunction } from './gc.js';

export interface ResourceSample {
  readonly [resource: string]: number;
}

export interface LifetimeCycleOptions {
  /** Default 1000; env KERNELKIT_LIFETIME_CYCLES overrides (a positive integer, else an error naming the variable). */
  readonly cycles?: number;
  /** What the backend holds now. Called after each cycle's run (alive) and after its dispose. */
  readonly sample?: (backend: Backend) => ResourceSample;
  /** Largest allowed value per resource after dispose; default 0 for every sampled resource. */
  readonly afterDisposeMax?: ResourceSample;
  /**
   * RSS outside V8's young generation (see `trackedRss`) may grow at most this many MiB between
   * the middle cycle and the end (after a forced GC when available); default 64. From the middle:
   * the allocators' and V8's pools of freed pages fill up over the first hundreds of cycles on
   * Node 22 and 24 and then stay flat, where a leak keeps growing with the cycles.
   */
  readonly rssGrowthMiB?: number;
  /**
   * The used size of this thread's V8 heap (after a forced GC) may grow at most this many MiB
   * between the end of the first 10 % of cycles and the end; default 16. Objects a cycle keeps
   * show here whatever the allocators do.
   */
  readonly heapGrowthMiB?: number;
  readonly timeoutMs?: number;
  /**
   * Largest allowed value per resource while alive. Default: the most seen during the first 10 %
   * of cycles (each cycle makes a fresh instance, so what one holds must not creep up).
   */
  readonly aliveMax?: ResourceSample;
  /**
   * How many more entries of `process.getActiveResourcesInfo()` (handles, requests, timers:
   * what keeps Node alive) there may be at the end than after the first 10 % of cycles, both
   * read after a dispose; default 0.
   */
  readonly activeResourcesGrowth?: number;
}

/** What one lifetime test measured; also printed as one line. */
export interface LifetimeReport {
  readonly cycles: number;
  readonly ms: number;
  /** RSS outside V8's young generation, after the middle cycle and at the end. */
  readonly rssMidMiB: number;
  readonly rssEndMiB: number;
  /** The young generation's resident size at the same two points (left out of the RSS bound). */
  readonly youngMidMiB: number;
  readonly youngEndMiB: number;
  /** The V8 heap's used size after the first 10 % of cycles and at the end. */
  readonly heapWarmMiB: number;
  readonly heapEndMiB: number;
  readonly aliveMax: ResourceSample;
  readonly activeResourcesWarm: number;
  readonly activeResourcesEnd: number;
  readonly gc: boolean;
}

const MiB = 2 ** 20;

/** Resident bytes of V8's young generation (new space) of this thread. */
const youngResident = (): number => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0;

/**
 * RSS less the young generation's resident pages. V8 grows the young generation towards its
 * configured limit under allocation pressure and keeps it after a collection (Node 24: up to
 * 2 × 64 MiB, resident and empty), so it says how much garbage a cycle made, not what it kept;
 * what a cycle keeps ends up in old space or outside the V8 heap, both counted here.
 */
function trackedRss(): { readonly rss: number; readonly young: number } {
  const young = youngResident();
  return { rss: process.memoryUsage.rss() - young, young };
}

/** Lets finalisers, worker exits and closed handles settle, then collects. */
async function settle(gc: (() => void) | undefined): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    gc?.();
  }
}

/** Counts of `process.getActiveResourcesInfo()` by type, e.g. { Timeout: 2, FSReqCallback: 1 }. */
function activeResources(): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of process.getActiveResourcesInfo()) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
}
const toMiB = (bytes: number): number => Math.round((bytes / MiB) * 10) / 10;
const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);

const CALLS: readonly { readonly op: OpName; readonly args: object }[] = [
  { op: 'conv2d', args: conv2dCase([1, 6, 5, 3], 41) },
  { op: 'stencil3d', args: stencilCase([5, 4, 3, 2, 'copy'], 42) },
  { op: 'scan', args: scanCase('u32', 100, 43, true, 9) },
  { op: 'gridSearch', args: GRID_CASES[4]!.args },
  { op: 'convLayer', args: convLayerCase([1, 2, 6, 5, 2, 3], 44, { bias: true, relu: true }) },
];

/** One small call of every op, checked against the reference; cycle `c` takes each op's variant number c mod count, so every variant gets its turns. */
async function everyOp(backend: Backend, c: number): Promise<void> {
  for (const { op, args } of CALLS) {
    const variants = backend.variants(op);
    const variant = variants[c % variants.length]!;
    const res = await (backend[op] as (a: unknown, o: unknown) => Promise<{ data: unknown }>)(args, { variant });
    const msg = verifyResult(op, args as never, res.data as never);
    if (msg !== undefined) throw new Error(`cycle ${c}: ${op}/${variant}: ${msg}`);
  }
}

function checkOptions(options: LifetimeCycleOptions): void {
  assertObject(options, 'options');
  if (options.cycles !== undefined) assertInteger(options.cycles, 'options.cycles', 1);
  for (const key of ['rssGrowthMiB', 'heapGrowthMiB'] as const) {
    const v = options[key];
    if (v !== undefined && !(typeof v === 'number' && v >= 0)) throw new InvalidArgumentError(`options.${key}`, `expected a number >= 0, got ${describeValue(v)}`);
  }
  if (options.activeResourcesGrowth !== undefined) assertInteger(options.activeResourcesGrowth, 'options.activeResourcesGrowth', 0);
  if (options.timeoutMs !== undefined) assertInteger(options.timeoutMs, 'options.timeoutMs', 1);
}

/**
 * Runs the cycles now (see `describeLifetimeCycles`) and resolves to what was measured; rejects
 * naming the resource (or RSS) and the cycle that broke a bound. `cycles` here is final: the
 * environment override is applied by `describeLifetimeCycles`.
 */
export async function runLifetimeCycles(name: string, create: () => Backend | Promise<Backend>, options: LifetimeCycleOptions & { readonly cycles: number }): Promise<LifetimeReport> {
  checkOptions(options);
  const { cycles } = options;
  const fail = (msg: string): never => {
    throw new Error(`${name}: ${msg}`);
  };
  const rssBound = options.rssGrowthMiB ?? 64;
  const gc = gcFunction();
  const heapBound = options.heapGrowthMiB ?? 16;
  const warm = Math.max(1, Math.ceil(cycles / 10));
  const mid = Math.max(1, Math.ceil(cycles / 2));
  const aliveSeen: Record<string, number> = {};
  let rssMid = { rss: 0, young: 0 };
  let heapWarm = 0;
  let resWarm = new Map<string, number>();
  const t0 = performance.now();
  for (let c = 1; c <= cycles; c++) {
    const backend = await create();
    let alive: ResourceSample | undefined;
    try {
      await everyOp(backend, c);
      alive = options.sample?.(backend);
    } finally {
      await backend.dispose();
    }
    // One turn of the event loop per cycle, as an application's would take: releases that
    // finish on a timer (gpu.js destroys its kernels on the next turn) would otherwise pile up
    // over a tight loop of synchronous calls and read as growth.
    await new Promise((r) => setImmediate(r));
    for (const [k, v] of Object.entries(alive ?? {})) {
      const bound = options.aliveMax?.[k] ?? (c > warm ? aliveSeen[k] : undefined);
      if (bound !== undefined && v > bound) fail(`cycle ${c}: ${k} = ${v} while alive, more than ${bound} (${options.aliveMax?.[k] !== undefined ? 'aliveMax' : `the most in the first ${warm} cycles`})`);
      aliveSeen[k] = Math.max(aliveSeen[k] ?? v, v);
    }
    if (options.sample !== undefined) {
      for (const [k, v] of Object.entries(options.sample(backend))) {
        const bound = options.afterDisposeMax?.[k] ?? 0;
        if (v > bound) fail(`cycle ${c}: ${k} = ${v} after dispose, at most ${bound} allowed`);
      }
    }
    if (c === warm) {
      await settle(gc);
      heapWarm = process.memoryUsage().heapUsed;
      resWarm = activeResources();
    }
    if (c === mid) {
      await settle(gc);
      rssMid = trackedRss();
    }
  }
  await settle(gc);
  const rssEnd = trackedRss();
  const heapEnd = process.memoryUsage().heapUsed;
  const resEnd = activeResources();
  const report: LifetimeReport = {
    cycles,
    ms: Math.round(performance.now() - t0),
    rssMidMiB: toMiB(rssMid.rss),
    rssEndMiB: toMiB(rssEnd.rss),
    youngMidMiB: toMiB(rssMid.young),
    youngEndMiB: toMiB(rssEnd.young),
    heapWarmMiB: toMiB(heapWarm),
    heapEndMiB: toMiB(heapEnd),
    aliveMax: { ...aliveSeen },
    activeResourcesWarm: total(resWarm),
    activeResourcesEnd: total(resEnd),
    gc: gc !== undefined,
  };
  console.info(
    `${name}: ${cycles} cycles in ${(report.ms / 1000).toFixed(1)} s${gc ? ' (memory after GC)' : ' (no GC available)'}; heap used ${report.heapWarmMiB} MiB after cycle ${warm}, ${report.heapEndMiB} at the end;` +
      ` RSS outside the young generation ${report.rssMidMiB} MiB after cycle ${mid}, ${report.rssEndMiB} at the end (young generation ${report.youngMidMiB} → ${report.youngEndMiB}); alive max ${JSON.stringify(report.aliveMax)}; active resources ${report.activeResourcesWarm} → ${report.activeResourcesEnd}`,
  );
  const heapGrowth = (heapEnd - heapWarm) / MiB;
  if (heapGrowth > heapBound) fail(`the V8 heap's used size grew ${heapGrowth.toFixed(1)} MiB between cycle ${warm} and cycle ${cycles}, more than ${heapBound} MiB`);
  const growth = (rssEnd.rss - rssMid.rss) / MiB;
  if (growth > rssBound) fail(`RSS outside V8's young generation grew ${growth.toFixed(1)} MiB between cycle ${mid} and cycle ${cycles}, more than ${rssBound} MiB`);
  const resGrowth = options.activeResourcesGrowth ?? 0;
  for (const [type, n] of resEnd) {
    const was = resWarm.get(type) ?? 0;
    if (n - was > resGrowth) fail(`process.getActiveResourcesInfo() has ${n} ${type} after cycle ${cycles}, ${was} after cycle ${warm} (more than ${resGrowth} new)`);
  }
  return report;
}

/**
 * Registers one vitest test: `cycles` × (create → one small call of every op, checked against
 * the reference → dispose), sampling resources and RSS; fails naming the resource and cycle that
 * broke the bound. Resources are sampled after each run (alive: at most `aliveMax`) and after each
 * dispose (at most `afterDisposeMax`, default 0); the V8 heap's used size and Node's active
 * resources are compared between the end of the first 10 % of cycles and the end, RSS outside the
 * young generation between the middle cycle and the end, after a forced GC.
 */
export function describeLifetimeCycles(name: string, create: () => Backend | Promise<Backend>, options: LifetimeCycleOptions = {}): void {
  checkOptions(options);
  const cycles = lifetimeCyclesFromEnv() ?? options.cycles ?? 1000;
  it(`${name}: ${cycles} cycles of create → every op → dispose leak nothing`, { timeout: options.timeoutMs ?? 600_000 }, async () => {
    await runLifetimeCycles(name, create, { ...options, cycles });
  });
}
