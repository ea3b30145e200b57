/**
 * Do a key's trial calls run as fast as its settled calls? In one process, as the bench's router
 * row has it (calibration in a child, an empty cache of its own), every case of a workload gets
 * `--calls` routed calls in a row, each timed and labelled with where it went and why (warm-up,
 * trial, confirmation, settled). Then, with `--direct`, each backend and variant the router tried
 * runs the same number of calls in a process of its own, so one sees whether a candidate's trial
 * calls ran at the speed it settles at and at the speed its own process gives it.
 *
 *   node apps/studies/dist/router/settling.js [--workload seed] [--cases id,...] [--calls 60] [--direct] [--json]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '@kernelkit/core';
import { benchCases, type BenchCase } from '@kernelkit/bench';
import type { BackendName, OpName } from '@kernelkit/ops';
import { BACKEND_NAMES, createKernels, defaultLoaders, type Kernels } from 'kernelkit';
import { Command, integer, oneOf, parseStudyArgs, runNode } from '../common.js';

interface Argv {
  workload: 'small' | 'tiny' | 'seed';
  cases?: string;
  calls: number;
  direct?: boolean;
  /** Internal: run `backend/variant` directly on `cases` in this process and print JSON. */
  only?: string;
  json?: boolean;
}

const argv = parseStudyArgs<Argv>(
  new Command('settling')
    .description("per-call times of the router's trials against its settled calls, and (--direct) against each candidate in a process of its own")
    .option('--workload <name>', 'bench workload: small, tiny or seed', oneOf(['small', 'tiny', 'seed'] as const), 'seed')
    .option('--cases <ids>', 'comma-separated case ids (default: every case but the grid search)')
    .option('--calls <n>', 'calls per case', integer(2), 60)
    .option('--direct', 'also time every candidate the router tried, each in a process of its own')
    .option('--only <backend/variant>', 'internal: time one backend and variant directly')
    .option('--json', 'print one JSON line'),
);

interface Call {
  readonly ms: number;
  readonly to: string;
  readonly choice: string;
}

interface CaseCalls {
  readonly id: string;
  readonly calls: readonly Call[];
  /** The trials the settled route reports, ms by backend/variant. */
  readonly trials?: Readonly<Record<string, number>>;
}

type RoutedCall = (args: unknown, options?: Record<string, unknown>) => Promise<{ readonly variant: string; readonly route?: { readonly backend: BackendName; readonly variant?: string; readonly choice?: string; readonly trials?: Record<string, number> } }>;

const selectedCases = (): BenchCase[] => {
  const wanted = argv.cases?.split(',').map((s) => s.trim());
  return benchCases(argv.workload).filter((c) => (wanted ? wanted.includes(c.id) : c.op !== 'gridSearch'));
};

async function timedCalls(call: RoutedCall, args: unknown, n: number, options?: Record<string, unknown>): Promise<Call[]> {
  const out: Call[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await call(args, options);
    const ms = performance.now() - t0;
    out.push({ ms, to: r.route ? `${r.route.backend}/${r.variant}` : r.variant, choice: r.route?.choice ?? 'direct' });
  }
  return out;
}

async function routedProcess(): Promise<CaseCalls[]> {
  const dir = await mkdtemp(join(os.tmpdir(), 'kernelkit-settling-'));
  const kernels: Kernels = await createKernels({ route: 'auto', calibrationCache: join(dir, 'calibration.json') });
  const rows: CaseCalls[] = [];
  try {
    await kernels.calibrate();
    for (const c of selectedCases()) {
      const args = await c.make();
      const call = (kernels[c.op] as unknown as RoutedCall).bind(kernels);
      const calls = await timedCalls(call, args, argv.calls);
      const last = await call(args);
      rows.push({ id: c.id, calls, ...(last.route?.trials ? { trials: last.route.trials } : {}) });
      process.stderr.write(`routed ${c.id}: settled on ${calls.at(-1)!.to}\n`);
    }
  } finally {
    await kernels.dispose();
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}

async function directProcess(name: string): Promise<CaseCalls[]> {
  const [backend, variant] = name.split('/') as [BackendName, string];
  if (!BACKEND_NAMES.includes(backend)) throw new Error(`--only: unknown backend ${backend}`);
  const b = await defaultLoaders[backend](backend === 'webgpu' ? { adapter: 'any' } : {});
  const rows: CaseCalls[] = [];
  try {
    for (const c of selectedCases()) {
      if (!b.variants(c.op as OpName).includes(variant)) continue;
      const args = await c.make();
      const call = (b[c.op] as unknown as RoutedCall).bind(b);
      rows.push({ id: c.id, calls: await timedCalls(call, args, argv.calls, { variant }) });
    }
  } finally {
    await b.dispose();
  }
  return rows;
}

const fmt = (ms: number): string => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const med = (xs: readonly number[]): string => (xs.length === 0 ? '-' : fmt(median([...xs])));

/** One case: each candidate's trial-phase calls (timed ones), its settled calls, and its own process's later half. */
function summary(routed: CaseCalls, direct: ReadonlyMap<string, CaseCalls>): string {
  const lines = [`${routed.id}: ${routed.calls.length} routed calls; trials as the route reports them: ${Object.entries(routed.trials ?? {}).map(([k, v]) => `${k} ${fmt(v)}`).join(', ') || '-'}`];
  const names = [...new Set(routed.calls.map((c) => c.to))];
  lines.push(`  ${'candidate'.padEnd(30)} ${'trial calls (median, n)'.padEnd(24)} ${'settled calls (median, n)'.padEnd(26)} own process, later half (median, min)`);
  for (const name of names) {
    const mine = routed.calls.filter((c) => c.to === name);
    const trial = mine.filter((c) => c.choice === 'trial' || c.choice === 'confirm' || c.choice === 'rematch').map((c) => c.ms);
    const settled = mine.filter((c) => c.choice === 'measured').map((c) => c.ms);
    const own = direct.get(name)?.calls.slice(Math.floor(argv.calls / 2)).map((c) => c.ms);
    lines.push(`  ${name.padEnd(30)} ${`${med(trial)} (${trial.length})`.padEnd(24)} ${`${med(settled)} (${settled.length})`.padEnd(26)} ${own ? `${med(own)}, ${fmt(Math.min(...own))}` : '-'}`);
  }
  lines.push(`  every call: ${routed.calls.map((c) => `${fmt(c.ms)}${c.choice === 'measured' ? '' : c.choice[0]}@${c.to.split('/')[0]}`).join(' ')}`);
  return lines.join('\n');
}

if (argv.only !== undefined) {
  process.stdout.write(JSON.stringify(await directProcess(argv.only)) + '\n');
} else {
  const passOn = ['--workload', argv.workload, '--calls', String(argv.calls), ...(argv.cases ? ['--cases', argv.cases] : [])];
  const routed = await routedProcess();
  const direct = new Map<string, Map<string, CaseCalls>>();
  if (argv.direct) {
    const names = [...new Set(routed.flatMap((r) => r.calls.map((c) => c.to)))];
    for (const name of names) {
      const rows = JSON.parse((await runNode([fileURLToPath(import.meta.url), ...passOn, '--only', name])).trim().split('\n').at(-1)!) as CaseCalls[];
      for (const r of rows) direct.set(r.id, (direct.get(r.id) ?? new Map()).set(name, r));
      process.stderr.write(`direct ${name}: done\n`);
    }
  }
  if (argv.json) process.stdout.write(JSON.stringify({ routed, direct: Object.fromEntries([...direct].map(([k, v]) => [k, Object.fromEntries(v)])) }) + '\n');
  else process.stdout.write(routed.map((r) => summary(r, direct.get(r.id) ?? new Map())).join('\n\n') + '\n');
}
