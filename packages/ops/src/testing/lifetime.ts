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
  /** RSS may grow at most this many MiB between the end of the first 10 % of cycles and the end (after a forced GC when available); default 64. */
  readonly rssGrowthMiB?: number;
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
  readonly rssWarmMiB: number;
  readonly rssEndMiB: number;
  readonly aliveMax: ResourceSample;
  readonly activeResourcesWarm: number;
  readonly activeResourcesEnd: number;
  readonly gc: boolean;
}

const MiB = 2 ** 20;

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
  if (options.rssGrowthMiB !== undefined && !(typeof options.rssGrowthMiB === 'number' && options.rssGrowthMiB >= 0)) {
    throw new InvalidArgumentError('options.rssGrowthMiB', `expected a number >= 0, got ${describeValue(options.rssGrowthMiB)}`);
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
  const warm = Math.max(1, Math.ceil(cycles / 10));
  const aliveSeen: Record<string, number> = {};
  let rssWarm = 0;
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
      rssWarm = process.memoryUsage.rss();
      resWarm = activeResources();
    }
  }
  await settle(gc);
  const rssEnd = process.memoryUsage.rss();
  const resEnd = activeResources();
  const report: LifetimeReport = {
    cycles,
    ms: Math.round(performance.now() - t0),
    rssWarmMiB: Math.round((rssWarm / MiB) * 10) / 10,
    rssEndMiB: Math.round((rssEnd / MiB) * 10) / 10,
    aliveMax: { ...aliveSeen },
    activeResourcesWarm: total(resWarm),
    activeResourcesEnd: total(resEnd),
    gc: gc !== undefined,
  };
  console.info(
    `${name}: ${cycles} cycles in ${(report.ms / 1000).toFixed(1)} s; RSS ${report.rssWarmMiB} MiB after cycle ${warm}, ${report.rssEndMiB} MiB at the end` +
      `${gc ? ' (after GC)' : ' (no GC available)'}; alive max ${JSON.stringify(report.aliveMax)}; active resources ${report.activeResourcesWarm} → ${report.activeResourcesEnd}`,
  );
  const growth = (rssEnd - rssWarm) / MiB;
  if (growth > rssBound) fail(`RSS grew ${growth.toFixed(1)} MiB between cycle ${warm} and cycle ${cycles}, more than ${rssBound} MiB`);
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
 * dispose (at most `afterDisposeMax`, default 0); RSS and Node's active resources are compared
 * between the end of the first 10 % of cycles and the end, after a forced GC.
 */
export function describeLifetimeCycles(name: string, create: () => Backend | Promise<Backend>, options: LifetimeCycleOptions = {}): void {
  checkOptions(options);
  const cycles = lifetimeCyclesFromEnv() ?? options.cycles ?? 1000;
  it(`${name}: ${cycles} cycles of create → every op → dispose leak nothing`, { timeout: options.timeoutMs ?? 600_000 }, async () => {
    await runLifetimeCycles(name, create, { ...options, cycles });
  });
}
