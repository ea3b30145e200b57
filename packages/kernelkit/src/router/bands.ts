import { OP_NAMES, type BackendName, type OpName } from '@kernelkit/ops';
import type { MeasuredChoices } from './cache.js';
import { opCostOf, predictMs, routedVariants, type CallShape, type CostModel } from './cost-model.js';

/** What `work` counts per op (from @kernelkit/ops), for tables. */
export const WORK_UNITS: Readonly<Record<OpName, string>> = {
  conv2d: 'multiply-adds',
  stencil3d: 'point updates',
  scan: 'bytes moved',
  gridSearch: 'pruned-search node tests',
  convLayer: 'multiply-adds',
};

/** The bands table's resolution: work is swept in steps of a quarter decade, and routing keys use the same bands. */
export const BAND_STEPS_PER_DECADE = 4;

/** Stencil calls in the bands table are taken to run this many steps (the other ops make one pass). */
export const BAND_STENCIL_STEPS = 10;

export interface Band {
  /** Work from (inclusive); the last band runs to the end of the sweep. */
  readonly fromWork: number;
  readonly backend: BackendName;
  readonly variant: string;
}

/** The model's pick for `shape` with every backend started, over each backend's routed variants. */
export function predictedPick(model: CostModel, shape: CallShape): { readonly backend: BackendName; readonly variant: string; readonly ms: number } | undefined {
  let best: { backend: BackendName; variant: string; ms: number } | undefined;
  for (const [name, cost] of Object.entries(model.backends) as [BackendName, NonNullable<CostModel['backends'][BackendName]>][]) {
    for (const v of routedVariants(cost, shape.op)) {
      const fit = opCostOf(cost, shape.op, v);
      if (fit === undefined) continue;
      const ms = predictMs(model, name, cost, fit.cost.fit, shape, true);
      if (best === undefined || ms < best.ms) best = { backend: name, variant: v, ms };
    }
  }
  return best;
}

const hostShape = (op: OpName, work: number, passes: number): CallShape => ({ op, work, passes, inputBytes: 0, outputBytes: 0, input: { kind: 'host' }, output: 'array' });

/** Which backend the model picks for host-array calls of `op` as work grows (every backend already started), from 1e3 to 1e11. */
export function routingBands(model: CostModel, op: OpName): Band[] {
  const bands: Band[] = [];
  for (let step = 3 * BAND_STEPS_PER_DECADE; step <= 11 * BAND_STEPS_PER_DECADE; step++) {
    const work = 10 ** (step / BAND_STEPS_PER_DECADE);
    const best = predictedPick(model, hostShape(op, work, op === 'stencil3d' ? BAND_STENCIL_STEPS : 1));
    if (best === undefined) continue;
    const last = bands[bands.length - 1];
    if (last === undefined || last.backend !== best.backend || last.variant !== best.variant) bands.push({ fromWork: work, backend: best.backend, variant: best.variant });
  }
  return bands;
}

/**
 * The measured choices as text lines, each with the model's prediction for its trials' size
 * (host-array keys only: the others' copy costs depend on sizes the key does not keep).
 */
export function formatMeasuredChoices(model: CostModel, choices: MeasuredChoices): string[] {
  const entries = Object.entries(choices);
  if (entries.length === 0) return ['  (none yet: auto-routed calls record them as they explore)'];
  return entries.map(([key, c]) => {
    const trials = Object.entries(c.trials).map(([name, t]) => `${name} ${t.ms.toFixed(1)} ms (${t.calls} call${t.calls === 1 ? '' : 's'})`).join(', ');
    const op = key.split(' ')[0] as OpName;
    const t = c.trials[`${c.backend}/${c.variant}`];
    const steps = /steps~2\^(\d+)/.exec(key);
    const predicted = t !== undefined && OP_NAMES.includes(op) && key.includes('in:host out:array') ? predictedPick(model, hostShape(op, t.work, steps ? 2 ** Number(steps[1]) : 1)) : undefined;
    return `    ${key}: ${c.backend}/${c.variant} (measured: ${trials})${predicted === undefined ? '' : `; predicted ${predicted.backend}/${predicted.variant}`}`;
  });
}

export const allBands = (model: CostModel): Record<OpName, Band[]> => Object.fromEntries(OP_NAMES.map((op) => [op, routingBands(model, op)])) as Record<OpName, Band[]>;

const num = (x: number): string => x.toExponential(1);

/**
 * A fitted copy speed past this is no host copy's or PCIe link's: the copy cost less than
 * calibration can tell apart from noise (a worker pool's "upload" is a copy into shared memory the
 * workers then read in place).
 */
const PAST_ANY_COPY_GBPS = 100;

/** A copy speed as the calibration table shows it. */
export function formatCopySpeed(msPerByte: number): string {
  if (!(msPerByte > 0)) return 'free';
  const gbps = 1e-6 / msPerByte;
  return gbps > PAST_ANY_COPY_GBPS ? `free (under what calibration resolves: fitted ${gbps.toExponential(1)} GB/s)` : `${gbps.toFixed(2)} GB/s`;
}

/** The calibration table and the picks per op and size band, as text lines. */
export function formatCostModel(model: CostModel): string[] {
  const lines: string[] = [];
  const entries = Object.entries(model.backends) as [BackendName, NonNullable<CostModel['backends'][BackendName]>][];
  if (entries.length === 0) return ['  (no calibration for this machine: run `kernelkit calibrate`, or it runs on the first auto-routed call)'];
  for (const [name, c] of entries) {
    lines.push(`  ${name.padEnd(8)} ${c.key}: start ${c.startMs.toFixed(0)} ms, upload ${formatCopySpeed(c.upload.msPerByte)}, download ${formatCopySpeed(c.download.msPerByte)}`);
    for (const op of OP_NAMES) {
      const byVariant = c.ops[op];
      if (byVariant === undefined) continue;
      const fits = Object.entries(byVariant);
      if (fits.length === 0) lines.push(`           ${op.padEnd(10)} not measured (too slow for the calibration budget)`);
      for (const [v, f] of fits) {
        const rate = f.fit.msPerWork > 0 ? `${num(1000 / f.fit.msPerWork)} ${WORK_UNITS[op]}/s` : 'no per-work cost measured';
        const pass = f.fit.msPerPass > 0 ? ` + ${f.fit.msPerPass.toFixed(2)} ms/step` : '';
        const copies = (f.fit.msPerByte ?? 0) > 0 ? ` + ${(f.fit.msPerByte! * 2 ** 20).toFixed(3)} ms/MiB moved` : '';
        lines.push(`           ${op.padEnd(10)} ${v}: ${f.fit.fixedMs.toFixed(2)} ms + ${rate}${pass}${copies} (${f.samples.length} samples)`);
      }
    }
  }
  lines.push('', `  picks (host arrays, backends running; stencil at ${BAND_STENCIL_STEPS} steps):`);
  for (const op of OP_NAMES) {
    const bands = routingBands(model, op);
    if (bands.length === 0) continue;
    const text = bands.map((b, i) => `${i === 0 ? '' : `from ${num(b.fromWork)}: `}${b.backend}/${b.variant}`).join('; ');
    lines.push(`    ${op.padEnd(10)} ${text}   (${WORK_UNITS[op]})`);
  }
  return lines;
}
