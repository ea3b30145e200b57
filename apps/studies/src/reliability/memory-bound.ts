/**
 * How much memory does a call take beyond its arguments and its result? For each backend and op,
 * one call in a fresh child process: the peak resident set during the call minus the resident set
 * once the backend has started and the arguments exist, minus the result, also as a multiple of
 * the result. The numbers behind the README's memory-bound table.
 *
 *   node apps/studies/dist/reliability/memory-bound.js [--backends cpu,piscina,webgpu] [--scale 1] [--md FILE] [--json FILE]
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createCpuBackend } from '@kernelkit/cpu';
import {
  CS610_DISP_PATH, CS610_GRID_PATH, convLayerOutputLength, makeConv2dArgs, makeConvLayerArgs, makeScanArgs, makeStencil3dArgs, OP_NAMES, readCs610Problem, reduceGrid,
  type Backend, type OpName,
} from '@kernelkit/ops';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { Command, integer, machineInfo, parseStudyArgs, someOf, writeTextFile } from '../common.js';

const BACKENDS = ['cpu', 'piscina', 'webgpu'] as const;
type StudyBackend = (typeof BACKENDS)[number];

const argv = parseStudyArgs<{ backends: StudyBackend[]; ops: OpName[]; scale: number; one?: string; md?: string; json?: string }>(
  new Command('memory-bound')
    .description('peak memory of one call beyond its arguments, per backend and op, each in a fresh process')
    .option('--backends <list>', `comma-separated: ${BACKENDS.join(', ')}`, someOf(BACKENDS), [...BACKENDS])
    .option('--ops <list>', `comma-separated: ${OP_NAMES.join(', ')}`, someOf(OP_NAMES), [...OP_NAMES])
    .option('--scale <n>', 'multiplies every input size', integer(), 1)
    .option('--one <backend:op>', '(internal) measure one cell and print it as JSON')
    .option('--md <file>', 'write a Markdown table')
    .option('--json <file>', 'write the rows as JSON'),
);

interface Cell {
  readonly args: unknown;
  /** Output bytes of the call (the grid search: 0, its point list is counted after the call). */
  readonly output: number;
  readonly label: string;
}

/** Calls of 64-256 MB of input + output at scale 1 (the grid search: its point list only). */
async function cellOf(op: OpName, s: number): Promise<Cell> {
  switch (op) {
    case 'conv2d': {
      const args = makeConv2dArgs({ batch: 8 * s, height: 1024, width: 1024, k: 5 });
      return { args, output: args.input.byteLength, label: `${8 * s}×1024² K=5` };
    }
    case 'stencil3d': {
      const args = makeStencil3dArgs({ n: 256, steps: 2, boundary: 'copy' });
      return { args, output: args.input.byteLength, label: '256³, 2 steps' };
    }
    case 'scan': {
      const args = makeScanArgs({ n: 16_000_000 * s, dtype: 'f32' });
      return { args, output: args.input.byteLength, label: `${16 * s}M f32` };
    }
    case 'gridSearch': {
      const args = reduceGrid(await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH), 6);
      return { args, output: 0, label: 'CS610, 6 steps/dim' };
    }
    case 'convLayer': {
      const w = { batch: 1000 * s, channels: 1, height: 86, width: 86, maps: 4, k: 7 };
      const args = makeConvLayerArgs(w);
      return { args, output: 4 * convLayerOutputLength({ ...w, outHeight: w.height - w.k + 1, outWidth: w.width - w.k + 1 }), label: `L1, B=${1000 * s}` };
    }
  }
}

async function open(name: StudyBackend): Promise<Backend> {
  if (name === 'cpu') return createCpuBackend();
  if (name === 'piscina') return createPiscinaBackend();
  return createWebGpuBackend();
}

const MiB = 2 ** 20;

if (argv.one !== undefined) {
  const [name, op] = argv.one.split(':') as [StudyBackend, OpName];
  const b = await open(name);
  const cell = await cellOf(op, argv.scale);
  const baseline = process.memoryUsage().rss;
  const peakBefore = process.resourceUsage().maxRSS * 1024;
  const r = await (b[op] as (a: unknown) => Promise<{ data: unknown }>).call(b, cell.args);
  const peak = process.resourceUsage().maxRSS * 1024;
  const resultPoints = op === 'gridSearch' ? (r.data as { points: Float64Array }).points.byteLength : 0;
  await b.dispose();
  // What the call held beyond its arguments and its own result: scratch, copies, staging.
  const overMiB = (Math.max(peak, peakBefore) - Math.max(baseline, peakBefore)) / MiB;
  const outputMiB = (cell.output + resultPoints) / MiB;
  console.log(JSON.stringify({ backend: name, op, label: cell.label, outputMiB, scratchMiB: Math.max(0, overMiB - outputMiB) }));
  process.exit(0);
}

interface Row {
  readonly backend: string;
  readonly op: OpName;
  readonly label: string;
  readonly outputMiB: number;
  readonly scratchMiB: number;
  readonly error?: string;
}

const self = fileURLToPath(import.meta.url);
const rows: Row[] = [];
for (const name of argv.backends) {
  for (const op of argv.ops) {
    const child = spawnSync(process.execPath, [self, '--one', `${name}:${op}`, '--scale', String(argv.scale)], { encoding: 'utf8', maxBuffer: 1 << 20 });
    const line = child.stdout.trim().split('\n').pop() ?? '';
    try {
      rows.push(JSON.parse(line) as Row);
    } catch {
      rows.push({ backend: name, op, label: '', outputMiB: Number.NaN, scratchMiB: Number.NaN, error: (child.stderr.trim().split('\n').pop() ?? `exit ${child.status}`).slice(0, 200) });
    }
    const r = rows.at(-1)!;
    console.error(`${name} ${op}: ${r.error ?? `${r.scratchMiB.toFixed(0)} MiB beyond the arguments and the ${r.outputMiB.toFixed(0)} MiB result`}`);
  }
}

const machine = machineInfo();
const lines = [
  'Peak resident memory of one call beyond its arguments and its result (each cell in a fresh process, after the backend started; peak RSS during the call − RSS before it − the result).',
  `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}.`,
  '',
  '| backend | op | call | result MiB | beyond arguments and result, MiB | ÷ result |',
  '|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.backend} | ${r.op} | ${r.label} | ${r.error ? '–' : r.outputMiB.toFixed(0)} | ${r.error ?? r.scratchMiB.toFixed(0)} | ${r.error || r.outputMiB < 1 ? '–' : (r.scratchMiB / r.outputMiB).toFixed(2)} |`),
];
console.log(lines.join('\n'));
if (argv.md !== undefined) await writeTextFile(argv.md, `${lines.join('\n')}\n`);
if (argv.json !== undefined) await writeTextFile(argv.json, `${JSON.stringify({ machine, rows }, null, 2)}\n`);
