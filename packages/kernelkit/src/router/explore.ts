import type { BackendName } from '@kernelkit/ops';
import { BAND_STEPS_PER_DECADE } from './bands.js';
import type { CallShape } from './cost-model.js';

/** Candidates predicted within this factor of the best measured time get a trial. */
export const DEFAULT_EXPLORE_FACTOR = 8;
/** Timed calls per trial (after the warm-up); the fastest counts, so one slow call does not decide. */
export const TRIAL_CALLS = 2;
/** A candidate predicted slower than this per call gets no trial: learning must not cost a huge call on a slow backend. */
export const DEFAULT_TRIAL_MAX_MS = 2000;

export interface ExploreSettings {
  readonly factor: number;
  readonly trialMaxMs: number;
  /** Timed calls per trial (default TRIAL_CALLS). */
  readonly trialCalls?: number;
}

/** One backend and variant the router can send a call to, with its prediction for the call at hand. */
export interface Pick {
  readonly name: BackendName;
  readonly variant: string;
  /** End to end, the backend's start-up included when it is not running yet. */
  readonly predictedMs: number;
  /** The start-up share of `predictedMs` (0 when running). */
  readonly startMs: number;
}

/** A candidate's trial for a routing key: its fastest timed call's end-to-end ms and work, and how many calls were timed (absent: a complete trial, as the cache keeps them). */
export interface Trial {
  readonly ms: number;
  readonly work: number;
  readonly calls?: number;
}

/** `trial` with one more timed call of `ms` at `work` folded in (the faster per unit of work is kept). */
export function addTrialCall(trial: Trial | undefined, ms: number, work: number): Trial {
  const calls = (trial?.calls ?? 0) + 1;
  return trial !== undefined && scaledMs(trial, work) <= ms ? { ms: trial.ms, work: trial.work, calls } : { ms, work, calls };
}

const complete = (t: Trial | undefined, calls: number): boolean => t !== undefined && (t.calls ?? calls) >= calls;

/** What the cache keeps per routing key: the trials (by `backend/variant`) and the candidate settled on. */
export interface MeasuredChoice {
  readonly backend: BackendName;
  readonly variant: string;
  readonly trials: Readonly<Record<string, Trial>>;
}

export const pickName = (p: { readonly name: BackendName; readonly variant: string } | { readonly backend: BackendName; readonly variant: string }): string =>
  `${'name' in p ? p.name : p.backend}/${p.variant}`;

/**
 * The routing key of a call: op, size band (the quarter decades of work the bands table uses,
 * and the step count's power of two for stencils), dtype, where the input lives, where the
 * output goes, and the variant the caller pinned. Calls with one key share one measured choice.
 */
export function routingKey(shape: CallShape, pinned: string | undefined): string {
  const band = Math.floor(Math.log10(Math.max(1, shape.work)) * BAND_STEPS_PER_DECADE);
  const steps = shape.passes > 1 ? ` steps~2^${Math.floor(Math.log2(shape.passes))}` : '';
  const input = shape.input.kind === 'host' ? 'host' : `${shape.input.backend}:${shape.input.location}`;
  return `${shape.op} work~10^${(band / BAND_STEPS_PER_DECADE).toFixed(2)}${steps} ${shape.dtype ?? '-'} in:${input} out:${shape.output}${pinned === undefined ? '' : ` variant:${pinned}`}`;
}

/** A trial's time scaled to `work`: calls of one key differ in size by up to a band's width. */
export const scaledMs = (t: Trial, work: number): number => (t.work > 0 ? (t.ms * work) / t.work : t.ms);

export type Decision =
  /** Run `pick` to measure it (its first call of the key in this process is a warm-up, not a trial). */
  | { readonly kind: 'explore'; readonly pick: Pick }
  | { readonly kind: 'settled'; readonly pick: Pick; readonly choice: MeasuredChoice }
  | { readonly kind: 'predicted'; readonly pick: Pick };

/**
 * The next step for one key. `ranked` is every candidate's prediction for this call, fastest
 * first. Each candidate whose running time (start-up left out: it is paid once, and trials are
 * timed after a warm-up) is predicted within `factor` of the best time measured so far (of the
 * best prediction before anything is measured), and whose call with start-up is predicted
 * under `trialMaxMs`, gets a trial of `TRIAL_CALLS` timed calls, in predicted order; the prediction's own pick always does,
 * since it runs anyway. With none left untried, the key settles on the fastest measured.
 */
export function decide(ranked: readonly Pick[], trials: ReadonlyMap<string, Trial>, work: number, s: ExploreSettings): Decision | undefined {
  const best = ranked[0];
  if (best === undefined) return undefined;
  let reference = Infinity;
  for (const p of ranked) {
    const t = trials.get(pickName(p));
    if (t !== undefined) reference = Math.min(reference, scaledMs(t, work));
  }
  if (reference === Infinity) reference = best.predictedMs - best.startMs;
  const near = (p: Pick): boolean => p.predictedMs - p.startMs <= s.factor * reference && p.predictedMs <= s.trialMaxMs;
  const next = ranked.find((p, i) => !complete(trials.get(pickName(p)), s.trialCalls ?? TRIAL_CALLS) && (i === 0 || near(p)));
  if (next !== undefined) return { kind: 'explore', pick: next };
  const choice = settle(ranked, trials, work);
  return choice === undefined ? { kind: 'predicted', pick: best } : choice;
}

/** The fastest measured candidate still on offer (by time per unit of work), with every trial. */
function settle(ranked: readonly Pick[], trials: ReadonlyMap<string, Trial>, work: number): Extract<Decision, { kind: 'settled' }> | undefined {
  let winner: Pick | undefined;
  let winnerMs = Infinity;
  for (const p of ranked) {
    const t = trials.get(pickName(p));
    if (t !== undefined && scaledMs(t, work) < winnerMs) [winner, winnerMs] = [p, scaledMs(t, work)];
  }
  if (winner === undefined) return undefined;
  return { kind: 'settled', pick: winner, choice: { backend: winner.name, variant: winner.variant, trials: Object.fromEntries(trials) } };
}
