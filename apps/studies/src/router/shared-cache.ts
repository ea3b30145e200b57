/**
 * Does a calibration cache shared by a machine's processes settle its keys better than a fresh one
 * per process? Calibrates once, then runs `--processes` child processes per mode, alternating:
 * 'fresh' starts each from the calibrated fits alone (no measured choices: every key explores, as
 * the bench's router rows do), 'shared' runs every process on one file, which keeps each settled
 * choice for the next (a cached close race is raced again, see the kernelkit README). Each
 * process makes `--calls` routed calls per case; it reports where the key settled, the median of
 * its settled calls and the median of all its calls (exploring included).
 *
 *   node apps/studies/dist/router/shared-cache.js [--workload small] [--cases id,...] [--processes 6] [--calls 200]
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '@kernelkit/core';
import { benchCases, type BenchCase } from '@kernelkit/bench';
import { createKernels } from 'kernelkit';
import { Command, integer, machineInfo, oneOf, parseStudyArgs, runNode } from '../common.js';

interface Argv {
  workload: 'small' | 'tiny' | 'seed';
  cases: string;
  processes: number;
  calls: number;
  /** Internal: run one process on this cache file and print JSON. */
  child?: string;
}

const argv = parseStudyArgs<Argv>(
  new Command('shared-cache')
    .description("where the router's keys settle with a calibration cache shared by processes, against a fresh one per process")
    .option('--workload <name>', 'bench workload: small, tiny or seed', oneOf(['small', 'tiny', 'seed'] as const), 'small')
    .option('--cases <ids>', 'comma-separated case ids', 'conv2d-4x512-k11,stencil-64-s100')
    .option('--processes <n>', 'processes per mode', integer(1), 6)
    .option('--calls <n>', 'routed calls per case and process', integer(2), 200)
    .option('--child <file>', 'internal: one process on this cache file'),
);

interface CaseResult {
  readonly id: string;
  readonly settledOn: string;
  readonly settledMs: number | undefined;
  readonly allMs: number;
}

/** The cases `--cases` names; an id the workload lacks is a usage error (exit 2), before any work. */
function selectCases(): BenchCase[] {
  const wanted = argv.cases.split(',').map((s) => s.trim());
  const all = benchCases(argv.workload);
  const unknown = wanted.filter((w) => !all.some((c) => c.id === w));
  if (unknown.length > 0) {
    process.stderr.write(`error: option '--cases <ids>': not in the ${argv.workload} workload: ${unknown.join(', ')} (it has ${all.map((c) => c.id).join(', ')})\n`);
    process.exit(2);
  }
  return all.filter((c) => wanted.includes(c.id));
}
const cases = selectCases();

type RoutedCall = (args: unknown) => Promise<{ readonly variant: string; readonly route: { readonly backend: string; readonly choice: string } }>;

async function oneProcess(cache: string): Promise<CaseResult[]> {
  const kernels = await createKernels({ route: 'auto', calibrationCache: cache });
  const out: CaseResult[] = [];
  try {
    for (const c of cases) {
      const args = await c.make();
      const call = (kernels[c.op] as unknown as RoutedCall).bind(kernels);
      const all: number[] = [];
      const settled: number[] = [];
      let to = '';
      for (let i = 0; i < argv.calls; i++) {
        const t0 = performance.now();
        const r = await call(args);
        const ms = performance.now() - t0;
        all.push(ms);
        if (r.route.choice === 'measured') settled.push(ms);
        to = `${r.route.backend}/${r.variant}${r.route.choice === 'measured' ? '' : ` (${r.route.choice}: not settled)`}`;
      }
      out.push({ id: c.id, settledOn: to, settledMs: settled.length === 0 ? undefined : median(settled), allMs: median(all) });
    }
  } finally {
    await kernels.dispose();
  }
  return out;
}

const fmt = (ms: number | undefined): string => (ms === undefined ? '-' : ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

if (argv.child !== undefined) {
  process.stdout.write(JSON.stringify(await oneProcess(argv.child)) + '\n');
} else {
  const dir = await mkdtemp(join(os.tmpdir(), 'kernelkit-shared-cache-'));
  try {
    const seed = join(dir, 'fits.json');
    const k = await createKernels({ route: 'auto', calibrationCache: seed });
    await k.calibrate({ ops: [...new Set(cases.map((c) => c.op))] });
    await k.dispose();
    const shared = join(dir, 'shared.json');
    await copyFile(seed, shared);
    const self = fileURLToPath(import.meta.url);
    const passOn = ['--workload', argv.workload, '--cases', argv.cases, '--calls', String(argv.calls)];
    const results: Record<'fresh' | 'shared', CaseResult[][]> = { fresh: [], shared: [] };
    for (let i = 0; i < argv.processes; i++) {
      for (const mode of ['fresh', 'shared'] as const) {
        const file = mode === 'shared' ? shared : join(dir, `fresh-${i}.json`);
        if (mode === 'fresh') await copyFile(seed, file);
        const got = JSON.parse((await runNode([self, ...passOn, '--child', file])).trim().split('\n').at(-1)!) as CaseResult[];
        results[mode].push(got);
        process.stderr.write(`process ${i + 1}/${argv.processes} ${mode}: ${got.map((r) => `${r.id} on ${r.settledOn}`).join(', ')}\n`);
      }
    }
    const lines = [
      `# Router keys with a shared calibration cache against a fresh one per process (${argv.workload} workload)`,
      '',
      `Machine: ${JSON.stringify(machineInfo())}; ${new Date().toISOString()}. ${argv.processes} processes per mode, alternating (fresh, shared); ${argv.calls} routed calls per case and process; ms are per-process medians.`,
      '',
      '| case | mode | settled on, process by process | settled calls (median ms), process by process | median of the processes\' settled medians | all calls, exploring included (median of the processes) |',
      '|---|---|---|---|---|---|',
    ];
    for (const c of cases) {
      for (const mode of ['fresh', 'shared'] as const) {
        const rows = results[mode].map((p) => p.find((r) => r.id === c.id)!);
        const settled = rows.flatMap((r) => (r.settledMs === undefined ? [] : [r.settledMs]));
        lines.push(`| ${c.id} | ${mode} | ${rows.map((r) => r.settledOn).join(' · ')} | ${rows.map((r) => fmt(r.settledMs)).join(' · ')} | ${fmt(settled.length ? median(settled) : undefined)} | ${fmt(median(rows.map((r) => r.allMs)))} |`);
      }
    }
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
