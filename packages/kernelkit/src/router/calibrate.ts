import {
  CS610_DISP_PATH, CS610_GRID_PATH, OP_NAMES, makeConv2dArgs, makeConvLayerArgs, makeScanArgs, makeStencil3dArgs, readCs610Problem, reduceGrid,
  type Backend, type BackendName, type DeviceArray, type OpName,
} from '@kernelkit/ops';
import { median, errorMessage } from '@kernelkit/core';
import { callShape } from './call-shape.js';
import { movedBytes, timeOf, type BackendCost, type CalibrationSample, type OpCost, type TransferFit } from './cost-model.js';
import { DEFAULT_EXPLORE_FACTOR } from './explore.js';
import { fitTime, fitTransfer } from './fit.js';

/**
 * A target whose time at a size, from the terms of its fit that grow with the call alone (its
 * fixed cost left out, which larger calls amortise), is predicted over this many times the
 * fastest target's is not measured there: no routing would pick it at that size, and a software
 * GPU adapter spends most of a calibration on such sizes. Its fit keeps the smaller sizes'
 * samples.
 */
export const OUTCLASSED_FACTOR = DEFAULT_EXPLORE_FACTOR;

/**
 * Three sizes per op, smallest first, chosen so the sequential CPU backend takes milliseconds
 * to about a hundred: long enough to show throughput, short enough that every backend fits
 * in the time budget. They reach past the sizes below which Piscina runs a call inline
 * (its DEFAULT_INLINE_BELOW), so its fit is the pool's, not one thread's. Stencil sizes vary
 * steps apart from work so per-step overhead is fitted. The grid search's pruned work grows far
 * slower than its points, so its largest size is as large as the budget allows (6 steps/dim):
 * predictions at the seed grids are extrapolated less far.
 */
const CASES: { readonly [O in OpName]: readonly (() => Promise<unknown>)[] } = {
  conv2d: [
    async () => makeConv2dArgs({ batch: 1, height: 256, width: 256, k: 7 }),
    async () => makeConv2dArgs({ batch: 1, height: 1024, width: 1024, k: 5 }),
    async () => makeConv2dArgs({ batch: 1, height: 1024, width: 1024, k: 11 }),
  ],
  stencil3d: [
    async () => makeStencil3dArgs({ n: 64, steps: 2, boundary: 'copy' }),
    async () => makeStencil3dArgs({ n: 64, steps: 16, boundary: 'copy' }),
    async () => makeStencil3dArgs({ n: 128, steps: 4, boundary: 'copy' }),
  ],
  scan: [async () => makeScanArgs({ n: 2 ** 17, dtype: 'u32' }), async () => makeScanArgs({ n: 2 ** 22, dtype: 'u32' }), async () => makeScanArgs({ n: 2 ** 23, dtype: 'u32' })],
  gridSearch: [4, 5, 6].map((steps) => async () => reduceGrid(await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH), steps)),
  convLayer: [
    async () => makeConvLayerArgs({ batch: 4, channels: 1, height: 86, width: 86, maps: 4, k: 7 }),
    async () => makeConvLayerArgs({ batch: 16, channels: 4, height: 40, width: 40, maps: 16, k: 7 }),
    async () => makeConvLayerArgs({ batch: 48, channels: 4, height: 40, width: 40, maps: 16, k: 7 }),
  ],
};
export const CALIBRATION_SIZES = 3;

/** A started backend to calibrate, under the key the cache files it by. */
export interface CalibrationTarget {
  readonly name: BackendName;
  readonly key: string;
  readonly backend: Backend;
  readonly startMs: number;
}

export interface CalibrationProgress {
  readonly done: number;
  readonly total: number;
  /** What was just measured, e.g. "piscina scan #2". */
  readonly step: string;
  readonly elapsedMs: number;
}

export interface CalibrateOptions {
  /** Ops to measure; default every op. */
  readonly ops?: readonly OpName[];
  /** Also measure host↔device copies (needed once per backend). Default true. */
  readonly transfers?: boolean;
  /** Whole-run limit: measuring stops when it is spent and the fits use what was measured. */
  readonly budgetMs?: number;
  /** A size whose run is predicted (from the smaller ones) to exceed this is not run. */
  readonly maxRunMs?: number;
  readonly onProgress?: (p: CalibrationProgress) => void;
}

export interface CalibrationRun {
  /** Per backend: what was measured (ops and, when asked, transfers); missing ops did not get a sample. */
  readonly results: ReadonlyMap<BackendName, Partial<Pick<BackendCost, 'upload' | 'download'>> & { readonly ops: Partial<Record<OpName, Record<string, OpCost>>> }>;
  readonly ms: number;
  /** Steps left out: over the budget, predicted too long, or failed (with the reason). */
  readonly skipped: readonly string[];
}

/** A backend whose calls copy their data to and from a device (a GPU adapter): its fits get a bytes term (see TimeFit). */
const hasDeviceMemory = (b: Backend): boolean => b.info.adapter !== undefined;

type Call = (args: unknown, options: Record<string, unknown>) => Promise<{ data: unknown }>;
const callOf = (b: Backend, op: OpName): Call => (b[op] as unknown as Call).bind(b);

/**
 * One warm-up call (compiles, tuning), the backend's own warm-up (a GPU's clocks, lowered while
 * the other targets were measured), then up to three timed calls while they take under `spendMs` together; the median.
 */
async function timeCall(run: () => Promise<unknown>, spendMs: number, warmUp?: () => Promise<void>): Promise<number> {
  await run();
  await warmUp?.();
  const times: number[] = [];
  const t0 = performance.now();
  while (times.length < 3 && (times.length === 0 || performance.now() - t0 < spendMs)) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  return median(times);
}

/**
 * Measures each target's default variant of every op at the calibration sizes, size by size
 * across all targets (so a budget cut leaves every backend with its small sizes rather than
 * one backend with all of them), and the targets' host↔device copies. At each step the target
 * that has taken the least time so far goes first: a budget spent by one slow-to-measure target
 * (a software adapter compiling and tuning its first pipelines) then leaves the others measured,
 * not unmeasured and so never routed to.
 */
export async function calibrate(targets: readonly CalibrationTarget[], o: CalibrateOptions = {}): Promise<CalibrationRun> {
  const ops = o.ops ?? OP_NAMES;
  const budgetMs = o.budgetMs ?? 25_000;
  const maxRunMs = o.maxRunMs ?? 1500;
  const t0 = performance.now();
  const left = (): number => budgetMs - (performance.now() - t0);
  const transfers = o.transfers !== false;
  const total = targets.length * (ops.length * CALIBRATION_SIZES + (transfers ? 1 : 0));
  let done = 0;
  const tick = (step: string): void => {
    done++;
    o.onProgress?.({ done, total, step, elapsedMs: performance.now() - t0 });
  };
  const skipped: string[] = [];
  const samples = new Map<string, CalibrationSample[]>();
  const results = new Map<BackendName, { upload?: TransferFit; download?: TransferFit; ops: Partial<Record<OpName, Record<string, OpCost>>> }>();
  for (const t of targets) results.set(t.name, { ops: {} });
  const spent = new Map<BackendName, number>(targets.map((t) => [t.name, 0]));
  const timed = async <T>(name: BackendName, f: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    try {
      return await f();
    } finally {
      spent.set(name, spent.get(name)! + performance.now() - t);
    }
  };
  // Before anything is timed a software adapter goes last; otherwise ties keep the order given.
  const software = (t: CalibrationTarget): number => (t.backend.info.software ? 1 : 0);
  const cheapestFirst = (): CalibrationTarget[] => [...targets].sort((a, b) => spent.get(a.name)! - spent.get(b.name)! || software(a) - software(b));

  if (transfers) {
    for (const t of cheapestFirst()) {
      const step = `${t.name} transfers`;
      if (left() <= 0) skipped.push(`${step}: over the time budget`);
      else {
        try {
          Object.assign(results.get(t.name)!, await timed(t.name, () => measureTransfers(t.backend)));
        } catch (err) {
          skipped.push(`${step}: ${errorMessage(err)}`);
        }
      }
      tick(step);
    }
  }

  for (let size = 0; size < CALIBRATION_SIZES; size++) {
    for (const op of ops) {
      const args = await CASES[op][size]!();
      const shape = callShape(op, args);
      // Why target `name`, whose growing terms predict `lowerMs` at this size, is not worth measuring here; undefined when it is.
      const outclassedBy = (name: BackendName, lowerMs: number): string | undefined => {
        let best: { name: BackendName; ms: number } | undefined;
        for (const u of targets) {
          const theirs = u.name === name ? undefined : samples.get(`${u.name}\u0000${op}`);
          if (theirs === undefined || theirs.length === 0) continue;
          const ms = timeOf(fitTime(theirs), shape.work, shape.passes, movedBytes(shape));
          if (best === undefined || ms < best.ms) best = { name: u.name, ms };
        }
        if (best === undefined || lowerMs <= OUTCLASSED_FACTOR * best.ms) return undefined;
        return `predicted at least ${lowerMs.toFixed(1)} ms, over ${OUTCLASSED_FACTOR}× ${best.name}'s ${best.ms.toFixed(1)} ms (its fit uses the smaller sizes)`;
      };
      for (const t of cheapestFirst()) {
        const step = `${t.name} ${op} #${size + 1}`;
        const variant = t.backend.variants(op)[0]!;
        const key = `${t.name}\u0000${op}`;
        const have = samples.get(key) ?? [];
        const predicted = have.length ? fitTime(have) : undefined;
        const guess = predicted === undefined ? 0 : timeOf(predicted, shape.work, shape.passes, movedBytes(shape));
        // From two sizes on: one size's fit charges its fixed cost to the work, and would overstate the rate.
        const outclassed = predicted === undefined || have.length < 2 ? undefined : outclassedBy(t.name, guess - predicted.fixedMs);
        if (left() <= 0) skipped.push(`${step}: over the time budget`);
        else if (guess > maxRunMs || (size > 0 && have.length === 0)) skipped.push(`${step}: predicted ${guess.toFixed(0)} ms > ${maxRunMs} ms per run`);
        else if (outclassed !== undefined) skipped.push(`${step}: ${outclassed}`);
        else {
          try {
            const call = callOf(t.backend, op);
            const ms = await timed(t.name, () => timeCall(() => call(args, { variant }), Math.min(300, left()), t.backend.warmUp?.bind(t.backend)));
            have.push({ work: shape.work, passes: shape.passes, ms, ...(hasDeviceMemory(t.backend) ? { bytes: movedBytes(shape) } : {}) });
            samples.set(key, have);
            results.get(t.name)!.ops[op] = { [variant]: { fit: fitTime(have), samples: [...have] } };
          } catch (err) {
            skipped.push(`${step}: ${errorMessage(err)}`);
          }
        }
        tick(step);
      }
    }
  }
  return { results, ms: performance.now() - t0, skipped };
}

/**
 * Download: reading back a handle made with `output: 'device'`. Upload: a one-step stencil from
 * a host array minus the same from the backend's own handle (the copy a resident input saves).
 */
async function measureTransfers(b: Backend): Promise<{ upload: TransferFit; download: TransferFit }> {
  const up: { bytes: number; ms: number }[] = [];
  const down: { bytes: number; ms: number }[] = [];
  // Once: the copies below run back to back on this backend, so its clocks stay where this puts them.
  await b.warmUp?.();
  for (const n of [32, 96]) {
    const args = makeStencil3dArgs({ n, steps: 1, boundary: 'copy' });
    const bytes = (args.input as Float32Array).byteLength;
    const run = (input: Float32Array | DeviceArray<Float32Array>) => b.stencil3d({ ...args, input: input as Float32Array }, { output: 'device' });
    const handle = (await run(args.input as Float32Array)).data as DeviceArray<Float32Array>;
    try {
      const fromHost = await timeCall(async () => (await run(args.input as Float32Array)).data.dispose(), 300);
      const resident = await timeCall(async () => (await run(handle)).data.dispose(), 300);
      up.push({ bytes, ms: fromHost - resident });
      down.push({ bytes, ms: await timeCall(() => handle.read(), 300) });
    } finally {
      handle.dispose();
    }
  }
  return { upload: fitTransfer(up), download: fitTransfer(down) };
}
