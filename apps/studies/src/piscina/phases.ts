/**
 * Where a pooled conv call's time goes, against the sequential backend on the same call: calls on
 * the cpu backend and on the pool alternate (so machine noise hits both alike), and each pooled
 * call's phases (`lastCallStats(backend).phases` from @kernelkit/piscina/testing) give the calling
 * thread's staging, when each task started on its worker, its waits, kernel and copy times, and
 * how long after the last task ended the call heard back. Medians over the calls.
 *
 *   node apps/studies/dist/piscina/phases.js [--threads 2] [--calls 40] [--cases conv2d-1x1024-k5,…] [--out DIR]
 */
import os from 'node:os';
import { join } from 'node:path';
import { median } from '@kernelkit/core';
import { createCpuBackend } from '@kernelkit/cpu';
// Only the main entry of @kernelkit/ops: its ./testing entry loads vitest, which the GPU host lacks.
import { CONV2D_WORKLOADS, CONV_LAYER_WORKLOADS, makeConv2dArgs, makeConvLayerArgs, verifyResult, type Backend } from '@kernelkit/ops';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { lastCallStats, type CallPhases } from '@kernelkit/piscina/testing';
import { Command, integer, machineInfo, parseStudyArgs, someOf, writeTextFile } from '../common.js';

interface PhaseCase {
  readonly id: string;
  readonly label: string;
  readonly run: (b: Backend) => Promise<{ data: Float32Array }>;
  readonly check: (data: Float32Array) => string | undefined;
}

const CASES: readonly PhaseCase[] = [
  ...CONV2D_WORKLOADS.small.map((w): PhaseCase => {
    const args = makeConv2dArgs(w);
    return { id: w.id, label: `conv2d ${w.label}`, run: (b) => b.conv2d(args), check: (d) => verifyResult('conv2d', args, d) };
  }),
  ...CONV_LAYER_WORKLOADS.small.map((w): PhaseCase => {
    const args = makeConvLayerArgs(w);
    return { id: w.id, label: `convLayer ${w.label}`, run: (b) => b.convLayer(args), check: (d) => verifyResult('convLayer', args, d) };
  }),
];

const argv = parseStudyArgs<{ threads?: number; calls: number; cases?: string[]; out?: string }>(
  new Command('phases')
    .description("where a pooled conv call's time goes, beside the sequential backend")
    .option('--threads <n>', 'pool threads (default: all available)', integer())
    .option('--calls <n>', 'timed calls per backend and case (after 10 warm-up calls each)', integer(), 40)
    .option('--cases <list>', `comma-separated: ${CASES.map((c) => c.id).join(', ')}`, someOf(CASES.map((c) => c.id)))
    .option('--out <dir>', 'write piscina-phases.json and .md there'),
);
const threads = argv.threads ?? os.availableParallelism();

/** One pooled call's phases, reduced to the figures the table shows (ms). */
function summarise(p: CallPhases, totalMs: number): Record<string, number> {
  const starts = p.tasks.map((t) => t.startMs).sort((a, b) => a - b);
  const lastEnd = Math.max(...p.tasks.map((t) => t.endMs));
  const sum = (k: 'waitMs' | 'kernelMs' | 'copyMs') => p.tasks.reduce((a, t) => a + t[k], 0);
  return {
    totalMs,
    stagedMs: p.stagedMs,
    firstStartMs: starts[0]!,
    lastStartMs: starts[starts.length - 1]!,
    waitSumMs: sum('waitMs'),
    kernelSumMs: sum('kernelMs'),
    copySumMs: sum('copyMs'),
    lastEndMs: lastEnd,
    doneMs: p.doneMs,
    heardBackMs: p.doneMs - lastEnd,
  };
}

const cpu = createCpuBackend();
await using pool = await createPiscinaBackend({ threads });
const rows: Record<string, unknown>[] = [];
for (const c of CASES.filter((x) => argv.cases === undefined || argv.cases.includes(x.id))) {
  for (const b of [cpu, pool]) {
    const bad = c.check((await c.run(b)).data);
    if (bad !== undefined) throw new Error(`${c.id} on ${b.name}: ${bad}`);
  }
  for (let i = 0; i < 10; i++) {
    await c.run(cpu);
    await c.run(pool);
  }
  const cpuMs: number[] = [];
  const ratios: number[] = [];
  const phases: Record<string, number>[] = [];
  for (let i = 0; i < argv.calls; i++) {
    let t0 = performance.now();
    await c.run(cpu);
    const seq = performance.now() - t0;
    t0 = performance.now();
    await c.run(pool);
    const pooled = performance.now() - t0;
    const p = lastCallStats(pool)?.phases;
    if (p === undefined) throw new Error(`${c.id}: the pooled call reported no phases (did it run inline?)`);
    cpuMs.push(seq);
    ratios.push(seq / pooled);
    phases.push(summarise(p, pooled));
  }
  const row: Record<string, unknown> = { case: c.id, label: c.label, cpuMs: median(cpuMs), speedup: median(ratios) };
  for (const k of Object.keys(phases[0]!)) row[k] = median(phases.map((p) => p[k]!));
  rows.push(row);
  process.stderr.write(`${c.id}: cpu ${(row.cpuMs as number).toFixed(2)} ms, pool ${(row.totalMs as number).toFixed(2)} ms\n`);
}
await cpu.dispose();

// availableParallelism: the cores this process may use (under taskset, fewer than `cores`).
const machine = { ...machineInfo(), availableParallelism: os.availableParallelism() };
const fmt = (v: unknown) => (typeof v === 'number' ? v.toFixed(2) : String(v));
const head = ['case', 'cpu', 'pool', 'cpu/pool', 'staged', 'first / last task start', 'wait Σ', 'kernel Σ', 'copy Σ', 'last task end', 'heard back after', 'done'];
const md = [
  `# Piscina call phases (${threads} threads)`,
  '',
  `Machine: ${JSON.stringify(machine)}; ${new Date().toISOString()}. Medians of ${argv.calls} calls per case, cpu and pool alternating; ms from the call's start. Σ: summed over the call's tasks (one per thread).`,
  '',
  `| ${head.join(' | ')} |`,
  `|${head.map(() => '---').join('|')}|`,
  ...rows.map((r) => `| ${[r.label, r.cpuMs, r.totalMs, r.speedup, r.stagedMs, `${fmt(r.firstStartMs)} / ${fmt(r.lastStartMs)}`, r.waitSumMs, r.kernelSumMs, r.copySumMs, r.lastEndMs, r.heardBackMs, r.doneMs].map(fmt).join(' | ')} |`),
  '',
].join('\n');
process.stdout.write(md);
if (argv.out !== undefined) {
  await writeTextFile(join(argv.out, 'piscina-phases.json'), JSON.stringify({ machine, threads, calls: argv.calls, rows }, null, 2));
  await writeTextFile(join(argv.out, 'piscina-phases.md'), md);
}
