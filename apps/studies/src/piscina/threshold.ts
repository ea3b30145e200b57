/**
 * Where does the pool start to pay? For each op, a ladder of sizes is run inline
 * (`inlineBelow: Infinity`) and on the pool (`inlineBelow: 0`), alternating the two so that
 * machine noise hits both alike; the crossover is the smallest size from which the pool's median
 * stays below the inline median. The numbers behind `DEFAULT_INLINE_BELOW` (src/options.ts).
 *
 *   node apps/studies/dist/piscina/threshold.js [--threads N] [--runs 15] [--ops conv2d,scan,...]
 */
import os from 'node:os';
import { median } from '@kernelkit/core';
// Only the main entry of @kernelkit/ops: its ./testing entry loads vitest, which the GPU host lacks.
import {
  conv2dMultiplyAdds,
  convLayerMultiplyAdds,
  convLayerOutputShape,
  makeConv2dArgs,
  makeConvLayerArgs,
  makeScanArgs,
  makeStencil3dArgs,
  OP_NAMES,
  Rng,
  stencil3dPointUpdates,
  validateGridSearch,
  type Backend,
  type GridSearchArgs,
  type OpName,
} from '@kernelkit/ops';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { Command, integer, parseStudyArgs, someOf } from '../common.js';

const argv = parseStudyArgs<{ threads?: number; runs: number; ops?: OpName[] }>(
  new Command('threshold')
    .description('where the pool starts to pay: a ladder of sizes per op, inline against pooled')
    .option('--threads <n>', 'pool threads (default: all available)', integer())
    .option('--runs <n>', 'runs per size and path (median)', integer(), 15)
    .option('--ops <list>', `comma-separated: ${OP_NAMES.join(', ')}`, someOf(OP_NAMES)),
);
const threads = argv.threads ?? os.availableParallelism();
const runs = argv.runs;
const ops = argv.ops ?? [...OP_NAMES];

/** One problem size of an op's size ladder, with its work in the op's units. */
interface SizeStep {
  readonly work: number;
  readonly label: string;
  readonly args: unknown;
}

function gridCase(c: number): GridSearchArgs {
  const d = 5;
  const rng = new Rng(c);
  const dims = Array.from({ length: d }, () => ({ lower: 0, upper: c, step: 1 }));
  const coefficients = Array.from({ length: 3 * d }, () => rng.uniform(-1, 1));
  return { dims, coefficients, targets: [0.5 * c, 0, 0.1 * c], tolerances: [0.3 * c, 0.3 * c, 0.3 * c] };
}

function sizeSteps(op: OpName): SizeStep[] {
  switch (op) {
    case 'conv2d':
      return [24, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024].map((s) => ({ work: conv2dMultiplyAdds({ batch: 1, height: s, width: s, k: 5 }), label: `${s}², k=5`, args: makeConv2dArgs({ batch: 1, height: s, width: s, k: 5 }) }));
    case 'stencil3d':
      return [12, 16, 24, 32, 40, 48, 64, 80, 96, 128].map((n) => ({ work: stencil3dPointUpdates({ nx: n, ny: n, nz: n, steps: 4 }), label: `${n}³ × 4 steps`, args: makeStencil3dArgs({ n, steps: 4, boundary: 'copy' }) }));
    case 'scan':
      return [2 ** 13, 2 ** 14, 2 ** 15, 2 ** 16, 2 ** 17, 2 ** 18, 2 ** 19, 2 ** 20, 2 ** 21].map((n) => ({ work: n, label: `${n} u32`, args: makeScanArgs({ n, dtype: 'u32' }) }));
    case 'gridSearch':
      return [4, 5, 6, 8, 10, 12, 14, 16, 20].map((c) => ({ work: validateGridSearch(gridCase(c)).total, label: `${c}^5 points`, args: gridCase(c) }));
    case 'convLayer':
      // Then batches of the largest image: the WebAssembly kernel does one image in well under 1 ms.
      return [...[12, 16, 20, 24, 32, 40, 48, 64, 86].map((s) => [1, s]), [2, 86], [4, 86], [8, 86], [16, 86], [32, 86]].map(([batch, s]) => ({
        work: convLayerMultiplyAdds({ batch: batch!, channels: 1, maps: 4, k: 7, ...convLayerOutputShape({ height: s!, width: s!, k: 7 }) }),
        label: `${batch}×1×${s}², M=4, K=7`,
        args: makeConvLayerArgs({ batch: batch!, channels: 1, height: s!, width: s!, maps: 4, k: 7 }),
      }));
  }
}


async function time(backend: Backend, op: OpName, args: unknown): Promise<number> {
  // The brute force for grids: its work is the point count (pruning makes it data-dependent).
  const options = op === 'gridSearch' ? { variant: 'naive' } : {};
  const t0 = performance.now();
  await (backend[op] as unknown as (a: unknown, o: object) => Promise<unknown>).call(backend, args, options);
  return performance.now() - t0;
}

const all = Object.fromEntries(OP_NAMES.map((o) => [o, Number.POSITIVE_INFINITY]));
const none = Object.fromEntries(OP_NAMES.map((o) => [o, 0]));
await using inline = await createPiscinaBackend({ threads, inlineBelow: all });
await using pool = await createPiscinaBackend({ threads, inlineBelow: none });
process.stdout.write(`threshold: ${os.cpus()[0]?.model.trim()}, ${threads} threads, median of ${runs}, Node ${process.version}\n`);
for (const op of ops) {
  const steps = sizeSteps(op);
  // Warm both paths (JIT on this thread and in every worker).
  for (const step of steps) for (let i = 0; i < 3; i++) await Promise.all([time(inline, op, step.args), time(pool, op, step.args)]);
  const rows: Array<{ step: SizeStep; inlineMs: number; poolMs: number }> = [];
  for (const step of steps) {
    const inlineTimes: number[] = [];
    const poolTimes: number[] = [];
    for (let i = 0; i < runs; i++) {
      inlineTimes.push(await time(inline, op, step.args));
      poolTimes.push(await time(pool, op, step.args));
    }
    rows.push({ step, inlineMs: median(inlineTimes), poolMs: median(poolTimes) });
  }
  let cross: number | undefined;
  for (let i = rows.length - 1; i >= 0 && rows[i]!.poolMs < rows[i]!.inlineMs; i--) cross = rows[i]!.step.work;
  const big = rows.at(-1)!;
  const nsPerUnit = (1e6 * big.inlineMs) / big.step.work;
  const oneMs = 1e6 / nsPerUnit;
  process.stdout.write(
    `\n${op}: pool wins from ${cross === undefined ? 'never (in this ladder)' : `${cross} work units (≈ 2^${Math.log2(cross).toFixed(1)})`}; ` +
      `inline ${nsPerUnit.toFixed(2)} ns/unit, so 1 ms of work ≈ ${Math.round(oneMs)} units (≈ 2^${Math.log2(oneMs).toFixed(1)}); ` +
      `pool fixed cost ≈ ${rows[0]!.poolMs.toFixed(3)} ms\n`,
  );
  for (const { step, inlineMs, poolMs } of rows) {
    process.stdout.write(`  ${step.label.padEnd(22)} work ${String(step.work).padStart(9)}  inline ${inlineMs.toFixed(3).padStart(8)} ms  pool ${poolMs.toFixed(3).padStart(8)} ms  ${poolMs < inlineMs ? 'pool' : 'inline'}\n`);
  }
}
