/**
 * The cost of sharding one call over several WebGPU devices (createWebGpuBackend's `devices`):
 * the full CS610 grid search and convLayer L1 and L2 at B=10 000, each run by a one-device
 * backend and by a `--devices`-device backend, calls alternating between the two after a warm-up
 * each; the median of `--reps` untimed calls per backend, the overhead of the sharded one in
 * percent, and whether both gave the same bytes (SHA-256 of the output). On one GPU every device
 * is a queue of that GPU, so this measures what sharding costs (the issue's target: ≤ 5 %); on a
 * host with several distinct GPUs it measures the speed-up.
 *
 *   node apps/studies/dist/webgpu/multi-device.js --out DIR [--reps 5] [--devices 2] [--adapter hardware]
 *   node apps/studies/dist/webgpu/multi-device.js --out DIR --quick --adapter software   (small sizes, to check it runs)
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { median } from '@kernelkit/core';
import { CONV_LAYER_WORKLOADS, CS610_DISP_PATH, CS610_GRID_PATH, makeConvLayerArgs, readCs610Problem, reduceGrid, type Backend, type ConvLayerArgs, type GridSearchArgs } from '@kernelkit/ops';
import { createWebGpuBackend, type AdapterKind } from '@kernelkit/webgpu';
import { Command, integer, machineInfo, oneOf, parseStudyArgs, writeTextFile } from '../common.js';

const argv = parseStudyArgs<{ out: string; reps: number; devices: number; adapter: AdapterKind; quick?: boolean; gridSteps?: number; batch?: number }>(
  new Command('multi-device')
    .description('one-device vs several-device WebGPU backends on the full CS610 grid search and convLayer L1/L2 at B=10 000: medians, overhead %, same bytes')
    .requiredOption('--out <dir>', 'where webgpu-multi-device.json and webgpu-multi-device.md go')
    .option('--reps <n>', 'untimed calls per backend and workload after one warm-up each', integer(), 5)
    .option('--devices <n>', 'devices of the sharded backend', integer(), 2)
    .option('--adapter <kind>', 'hardware, software or any', oneOf<AdapterKind>(['hardware', 'software', 'any']), 'hardware')
    .option('--quick', 'small sizes (CS610 cut to 4 points per axis, B=20), for a software adapter')
    .option('--grid-steps <n>', 'CS610 points per axis (default 13: the full grid; 4 with --quick)', integer())
    .option('--batch <n>', 'convLayer batch (default 10 000; 20 with --quick)', integer()),
);

const gridSteps = argv.gridSteps ?? (argv.quick ? 4 : 13);
const batch = argv.batch ?? (argv.quick ? 20 : 10_000);

interface Workload {
  readonly id: string;
  readonly label: string;
  /** Runs one call and returns the bytes of its result. */
  readonly run: (b: Backend) => Promise<Uint8Array>;
}

const bytesOf = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

const cs610 = reduceGrid(await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH), gridSteps);
const grid = (args: GridSearchArgs): Workload => ({
  id: `grid-cs610-${gridSteps}`,
  label: gridSteps === 13 ? 'gridSearch CS610 full (13^10 pts)' : `gridSearch CS610, ${gridSteps} points per axis (${gridSteps}^10 pts)`,
  run: async (b) => bytesOf((await b.gridSearch(args)).data.points),
});
const layer = (which: 'L1' | 'L2'): Workload => {
  const w = CONV_LAYER_WORKLOADS.seed.find((c) => c.id === `convlayer-${which}-b10000`)!;
  const args: ConvLayerArgs = makeConvLayerArgs({ ...w, batch });
  return { id: `convlayer-${which}-b${batch}`, label: `convLayer ${w.label.replace(/B=\d+/, `B=${batch}`)}`, run: async (b) => bytesOf((await b.convLayer(args)).data) };
};
const list = [grid(cs610), layer('L1'), layer('L2')];

const one = await createWebGpuBackend({ adapter: argv.adapter });
const several = await createWebGpuBackend({ adapter: argv.adapter, devices: argv.devices });
const sha = (u: Uint8Array): string => createHash('sha256').update(u).digest('hex');

interface Row {
  readonly id: string;
  readonly label: string;
  readonly oneMs: number;
  readonly severalMs: number;
  /** (several / one − 1) · 100: positive is slower with sharding. */
  readonly overheadPercent: number;
  readonly sameBytes: boolean;
  readonly oneRunsMs: readonly number[];
  readonly severalRunsMs: readonly number[];
}

const rows: Row[] = [];
for (const w of list) {
  // Warm-up: pipelines, staging slices, tuned picks, on every device of both backends.
  const hashOne = sha(await w.run(one));
  const hashSeveral = sha(await w.run(several));
  const oneRuns: number[] = [];
  const severalRuns: number[] = [];
  for (let i = 0; i < argv.reps; i++) {
    // Alternating, so drift (clocks, heat, page cache) hits both alike.
    for (const [b, runs] of [[one, oneRuns], [several, severalRuns]] as const) {
      const t0 = performance.now();
      await w.run(b);
      runs.push(performance.now() - t0);
    }
  }
  const oneMs = median(oneRuns);
  const severalMs = median(severalRuns);
  const row: Row = { id: w.id, label: w.label, oneMs, severalMs, overheadPercent: (severalMs / oneMs - 1) * 100, sameBytes: hashOne === hashSeveral, oneRunsMs: oneRuns, severalRunsMs: severalRuns };
  rows.push(row);
  console.log(JSON.stringify(row));
}
const description = several.info.description;
await one.dispose();
await several.dispose();

const f = (v: number, d = 1) => v.toFixed(d);
const md = [
  `# WebGPU: one device vs ${argv.devices} (${description})`,
  '',
  `Median of ${argv.reps} untimed calls per backend after one warm-up call each, the two backends' calls alternating. Overhead: (${argv.devices} devices / 1 device − 1) · 100; on one GPU the devices are queues of the same GPU, so this is the cost of sharding (target ≤ 5 %). Same bytes: SHA-256 of the outputs of the two backends' warm-up calls.`,
  '',
  `| workload | 1 device ms | ${argv.devices} devices ms | overhead % | same bytes |`,
  '|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.label} | ${f(r.oneMs)} | ${f(r.severalMs)} | ${f(r.overheadPercent)} | ${r.sameBytes ? 'yes' : 'NO'} |`),
  '',
];
await writeTextFile(join(argv.out, 'webgpu-multi-device.md'), md.join('\n'));
await writeTextFile(join(argv.out, 'webgpu-multi-device.json'), JSON.stringify({ machine: machineInfo(), description, devices: argv.devices, reps: argv.reps, gridSteps, batch, rows }, null, 2));
console.log(md.join('\n'));
if (rows.some((r) => !r.sameBytes)) process.exitCode = 1;
