import { callsUntilResultsReused, median } from '@kernelkit/core';
import type { BackendName } from '@kernelkit/ops';
import { BAND_STEPS_PER_DECADE } from './bands.js';
import type { CallShape } from './cost-model.js';

/** Candidates predicted within this factor of the best measured time get a trial. */
export const DEFAULT_EXPLORE_FACTOR = 8;
/**
 * Timed calls every trial makes at least (after the warm-up). Long calls reach DEFAULT_TRIAL_MIN_MS
 * in one or two, but those are the calls that keep getting faster longest (a fresh output's pages
 * faulted in, result memory not yet coming back), so they get this many however long they take.
 */
export const TRIAL_CALLS = 4;
/**
 * A trial keeps timing until its timed calls add up to this many ms, and its time comes from the
 * later half of them (trialTime): a fresh worker pool's or GPU's calls at a new size keep getting
 * faster for several calls (buffers pooled, pages touched, clocks up), longer than one warm-up
 * call, and a trial of those early calls ranks a backend below what it runs at once settled.
 */
export const DEFAULT_TRIAL_MIN_MS = 250;
/** The most timed calls one trial makes, however short they are: a microsecond call must not take thousands of calls to learn. */
export const TRIAL_MAX_CALLS = 40;
/**
 * A candidate keeps the turn for timed calls adding up to this many ms before the next takes it.
 * Turns of single calls ranked a worker pool low: its first calls after the calling thread has been
 * busy with another candidate's run slower (threads idle, then woken), and call-by-call turns made
 * every pool call such a first call, which settled calls back to back never are.
 */
export const DEFAULT_TRIAL_RUN_MS = 50;
/**
 * On calls under POOL_MARGIN_MAX_MS a worker pool is chosen over another candidate only when it
 * measures at least this many times faster: a pool that merely ties holds every core for nothing,
 * and its short calls vary more from one process to the next than a single thread's or a GPU's
 * (its threads share the cores with the calling thread and the rest of the machine), so a tie in
 * the trials is often a loss later.
 */
export const POOL_MARGIN = 1.1;
/**
 * A worker pool measuring at least this many ms per call ranks by its measured time: what varies
 * from one process to the next is a pooled call's fixed cost (waking the workers, the calling
 * thread's share), which a call this long hides, so a pool's trial lead there carries over to its
 * settled calls. Below it, a pool's rank is capped here so the ranking stays monotone.
 */
export const POOL_MARGIN_MAX_MS = 100;

/**
 * A candidate's warm-up at a new key ends after this many ms of untimed calls even if its result
 * memory has not come round yet (see warmUpCalls): learning must not cost seconds.
 */
export const WARM_UP_MAX_MS = 2000;
/** The most warm-up calls a candidate makes at one key, however short they are. */
export const WARM_UP_MAX_CALLS = 80;

/**
 * Untimed calls a candidate makes at a routing key before its trial. One, to grow memory and
 * build pipelines; more when the call returns a fresh host array of 1 MiB (RESULT_MIN_BYTES) or more:
 * the backends hand such results fresh memory (a page fault per 4 KiB on its first write) until
 * callers hold `heldBetweenCollections` bytes and a prompted collection hands dropped results
 * back (callsUntilResultsReused), and a trial timed in that stretch ranks a candidate by its page
 * faults, which a loop of settled calls does not pay (on a VM they can cost several times the compute).
 */
export function warmUpCalls(shape: { readonly output: CallShape['output']; readonly outputBytes: number }, outGiven: boolean, heldBetweenCollections: number): number {
  if (shape.output === 'device' || outGiven) return 1;
  return Math.min(WARM_UP_MAX_CALLS, Math.max(1, callsUntilResultsReused(shape.outputBytes, heldBetweenCollections)));
}

/** Whether a candidate's warm-up at a key is over: `needed` calls (warmUpCalls, at most WARM_UP_MAX_CALLS), or WARM_UP_MAX_MS of them. */
export const warmedUp = (w: { readonly calls: number; readonly ms: number } | undefined, needed: number): boolean =>
  w !== undefined && (w.calls >= needed || w.ms >= WARM_UP_MAX_MS);

/** Whether `name` (a `backend/variant`) runs on the worker pool. */
export const isPool = (name: string): boolean => name.startsWith('piscina/');

/** The backend of `name` (a `backend/variant`). */
const backendOf = (name: string): string => name.slice(0, name.indexOf('/'));

/** A measured time as candidates are ranked by it: a worker pool's short calls raised by POOL_MARGIN (to at most POOL_MARGIN_MAX_MS). */
export const rankedMs = (name: string, ms: number): number => (isPool(name) && ms < POOL_MARGIN_MAX_MS ? Math.min(ms * POOL_MARGIN, POOL_MARGIN_MAX_MS) : ms);

/**
 * A trial measuring more than this many times its own candidate's predicted running time is run
 * once more at its key, the first dropped: calibration predicts within a few times either way,
 * so a trial that far off most likely caught a stall (a pool's threads held up, the machine busy
 * for seconds) rather than the candidate's speed, and one such trial would fix the key's choice,
 * in the cache too.
 */
export const RETRIAL_FACTOR = 10;

/** A candidate predicted slower than this per call gets no trial: learning must not cost a huge call on a slow backend. */
export const DEFAULT_TRIAL_MAX_MS = 2000;

export interface ExploreSettings {
  readonly factor: number;
  readonly trialMaxMs: number;
  /** Timed calls a trial makes at least (default TRIAL_CALLS). */
  readonly trialCalls?: number;
  /** Timed ms a trial adds up to at least, unless it reaches `trialMaxCalls` first (default DEFAULT_TRIAL_MIN_MS). */
  readonly trialMinMs?: number;
  /** Timed calls a trial makes at most once it has `trialCalls` (default TRIAL_MAX_CALLS). */
  readonly trialMaxCalls?: number;
  /** Timed ms a candidate's turn lasts (default DEFAULT_TRIAL_RUN_MS). */
  readonly trialRunMs?: number;
  /** A runner-up measured within this factor of the winner is raced again back to back (default DEFAULT_CLOSE_RACE; 1: never). */
  readonly closeRace?: number;
}

/** The candidate whose turn it is for one key: its name (`pickName`), and the timed calls and ms of this turn so far. */
export interface Turn {
  readonly name: string;
  readonly calls: number;
  readonly ms: number;
}

/** `turn` after a call of `name`: a timed one of `ms`, or (undefined) a warm-up. */
export function nextTurn(turn: Turn | undefined, name: string, ms: number | undefined): Turn {
  const [calls, sum] = turn?.name === name ? [turn.calls, turn.ms] : [0, 0];
  return ms === undefined ? { name, calls, ms: sum } : { name, calls: calls + 1, ms: sum + ms };
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

/** A candidate's trial for a routing key, as the cache keeps it: its end-to-end ms at `work` (trialTime of its timed calls) and how many calls were timed. */
export interface Trial {
  readonly ms: number;
  readonly work: number;
  readonly calls: number;
}

/** A trial under way: each timed call's ms scaled to the trial's `work`, and the wall ms they took together. */
export interface TrialRun extends Trial {
  readonly samples: readonly number[];
  readonly timedMs: number;
}

/**
 * A trial's time from its calls, in the order they ran: the median of the later half. The earlier
 * half is the candidate still warming up at this size; the median is what a loop of settled calls
 * runs at (and what the bench reports), so a candidate whose calls vary widely is not ranked by its
 * lucky ones, and a one-off page fault or busy moment of the machine does not decide either.
 * Of two calls: the second; of three, the mean of the last two.
 */
export function trialTime(samples: readonly number[]): number {
  return median(samples.slice(Math.floor(samples.length / 2)));
}

/** `trial` with one more timed call of `ms` at `work` folded in (scaled to the trial's work: calls of one key differ in size by up to a band's width). */
export function addTrialCall(trial: TrialRun | undefined, ms: number, work: number): TrialRun {
  const at = trial?.work ?? work;
  const samples = [...(trial?.samples ?? []), work > 0 && at > 0 ? (ms * at) / work : ms];
  return { ms: trialTime(samples), work: at, calls: samples.length, samples, timedMs: (trial?.timedMs ?? 0) + ms };
}

/** The bounds of one trial under `s`. */
export const trialBounds = (s: ExploreSettings): { readonly minCalls: number; readonly minMs: number; readonly maxCalls: number } => ({
  minCalls: s.trialCalls ?? TRIAL_CALLS,
  minMs: s.trialMinMs ?? DEFAULT_TRIAL_MIN_MS,
  maxCalls: Math.max(s.trialCalls ?? TRIAL_CALLS, s.trialMaxCalls ?? TRIAL_MAX_CALLS),
});

/** Whether a trial has timed enough: its minimum calls, and its minimum ms or its most calls. */
export function trialComplete(t: TrialRun | undefined, s: ExploreSettings): boolean {
  if (t === undefined) return false;
  const b = trialBounds(s);
  return t.calls >= b.minCalls && (t.timedMs >= b.minMs || t.calls >= b.maxCalls);
}

/**
 * Back-to-back blocks each side of a close race times, alternating winner, runner-up, winner, ...
 * The machine's speed can shift by half for seconds at a time (a VM's neighbours), so one block
 * each would let such a shift between them decide; with alternating blocks each block is held
 * against its neighbours on both sides (see pairedRatio).
 */
export const CONFIRM_ROUNDS = 2;

/**
 * Whether one block of a close race has timed enough back to back: a trial's minimum calls, and
 * its minimum ms (or most calls) shared among the side's CONFIRM_ROUNDS blocks. A side's blocks
 * together time twice a trial's calls: a worker pool's long calls vary by half from one to the
 * next, and a close race is where that decides.
 */
export function blockComplete(t: TrialRun | undefined, s: ExploreSettings): boolean {
  if (t === undefined) return false;
  const b = trialBounds(s);
  return t.calls >= b.minCalls && (t.timedMs >= b.minMs / CONFIRM_ROUNDS || t.calls >= b.maxCalls / CONFIRM_ROUNDS);
}

/**
 * Whether a begun trial is hopeless: even the fastest of its calls (two at least, so one cold call
 * cannot decide: its timed calls, and its fastest warm-up call where `warmUp` has it) took over
 * `factor` times the best time another candidate measured. It ends there: calls that slow cost
 * more than the rest of the trial could tell, and on a big call each is seconds.
 */
function hopeless(name: string, t: TrialRun, trials: ReadonlyMap<string, TrialRun>, work: number, factor: number, warmUp?: WarmUp): boolean {
  if (t.calls + (warmUp === undefined ? 0 : 1) < 2) return false;
  let best = Infinity;
  for (const [other, o] of trials) if (other !== name) best = Math.min(best, scaledMs(o, work));
  const fastest = Math.min(scaledMs({ ms: Math.min(...t.samples), work: t.work, calls: t.calls }, work), warmUp === undefined ? Infinity : scaledMs({ ...warmUp, calls: 1 }, work));
  return fastest > factor * best;
}

/** A candidate's fastest untimed warm-up call at a key: its ms at `work`. */
export interface WarmUp {
  readonly ms: number;
  readonly work: number;
}

/** The cached form of a trial: its time, work and calls, without the samples. */
export const trialOf = (t: Trial): Trial => ({ ms: t.ms, work: t.work, calls: t.calls });

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
  /**
   * Run `pick` to measure it (its first call of the key in this process is a warm-up, not a trial);
   * `retrial`: its trial is dropped first and run again (see RETRIAL_FACTOR).
   */
  | { readonly kind: 'explore'; readonly pick: Pick; readonly retrial?: true }
  | { readonly kind: 'settled'; readonly pick: Pick; readonly choice: MeasuredChoice }
  | { readonly kind: 'predicted'; readonly pick: Pick };

/**
 * The next step for one key. `ranked` is every candidate's prediction for this call, fastest
 * first. Each candidate whose running time (start-up left out: it is paid once, and trials are
 * timed after a warm-up) is predicted within `factor` of the best time measured so far (of the
 * best prediction before anything is measured; predictions scaled down by the lowest
 * measured-to-predicted ratio of the candidates measured), and whose call with start-up is predicted
 * under `trialMaxMs`, gets a trial (see trialComplete); the prediction's own pick always does,
 * since it runs anyway, and so does a candidate whose trial has begun, unless it is hopeless (its
 * fastest call over `factor` times another's best). Candidates take turns: the
 * one on `turn` keeps it while its trial is open, until the turn has a timed call and its timed
 * calls add up to `trialRunMs`; then the next turn goes to the open trial with the fewest timed ms (the earlier in
 * predicted order on a tie), so a slow phase of the machine lands on every candidate's calls, not
 * on one trial. With none open, the key settles on the fastest measured (see rankedMs).
 * `warmUps`: each candidate's fastest warm-up call at this key, by `backend/variant` (see hopeless).
 * Before settling, a trial over RETRIAL_FACTOR times its prediction is run again, once per
 * candidate: `retried` names those already run again at this key.
 */
export function decide(
  ranked: readonly Pick[], trials: ReadonlyMap<string, TrialRun>, work: number, s: ExploreSettings, turn?: Turn, warmUps?: ReadonlyMap<string, WarmUp>, retried?: ReadonlySet<string>,
): Decision | undefined {
  const best = ranked[0];
  if (best === undefined) return undefined;
  let reference = Infinity;
  // Predictions come from calibration calls, which pay what this process's settled calls may not
  // (fresh result memory, cold clocks): when the measured candidates ran faster than predicted,
  // the others' predictions are scaled down alike before they are held against those times.
  let scale = 1;
  for (const p of ranked) {
    const t = trials.get(pickName(p));
    if (t === undefined) continue;
    const ms = scaledMs(t, work);
    reference = Math.min(reference, ms);
    if (p.predictedMs - p.startMs > 0) scale = Math.min(scale, ms / (p.predictedMs - p.startMs));
  }
  if (reference === Infinity) reference = best.predictedMs - best.startMs;
  const near = (p: Pick): boolean => (p.predictedMs - p.startMs) * scale <= s.factor * reference && p.predictedMs <= s.trialMaxMs;
  const timedOf = (p: Pick): number => trials.get(pickName(p))?.timedMs ?? 0;
  // A turn has at least one timed call, so a warm-up is always followed by its candidate's trial.
  const keepTurn = turn !== undefined && (turn.calls === 0 || turn.ms < (s.trialRunMs ?? DEFAULT_TRIAL_RUN_MS));
  let next: Pick | undefined;
  let owner: Pick | undefined;
  for (const [i, p] of ranked.entries()) {
    const t = trials.get(pickName(p));
    // A trial once begun runs to its end (its own fast calls must not push it out of the factor), unless hopeless.
    if (trialComplete(t, s) || (i > 0 && t === undefined && !near(p)) || (t !== undefined && hopeless(pickName(p), t, trials, work, s.factor, warmUps?.get(pickName(p))))) continue;
    if (pickName(p) === turn?.name) {
      if (keepTurn) return { kind: 'explore', pick: p };
      owner = p;
    } else if (next === undefined || timedOf(p) < timedOf(next)) next = p;
  }
  // The turn passes to another open trial; the one whose turn ended goes on only when it is the last open.
  next ??= owner;
  if (next !== undefined) return { kind: 'explore', pick: next };
  for (const p of ranked) {
    const t = trials.get(pickName(p));
    const predicted = p.predictedMs - p.startMs;
    if (t !== undefined && predicted > 0 && !retried?.has(pickName(p)) && scaledMs(t, work) > RETRIAL_FACTOR * predicted) return { kind: 'explore', pick: p, retrial: true };
  }
  const choice = settle(ranked, trials, work);
  return choice === undefined ? { kind: 'predicted', pick: best } : choice;
}

/** The fastest measured candidate still on offer (by time per unit of work, see rankedMs), with every trial. */
function settle(ranked: readonly Pick[], trials: ReadonlyMap<string, Trial>, work: number): Extract<Decision, { kind: 'settled' }> | undefined {
  let winner: Pick | undefined;
  let winnerMs = Infinity;
  for (const p of ranked) {
    const t = trials.get(pickName(p));
    const ms = t === undefined ? Infinity : rankedMs(pickName(p), scaledMs(t, work));
    if (ms < winnerMs) [winner, winnerMs] = [p, ms];
  }
  if (winner === undefined) return undefined;
  const kept = Object.fromEntries([...trials].map(([name, t]) => [name, trialOf(t)]));
  return { kind: 'settled', pick: winner, choice: { backend: winner.name, variant: winner.variant, trials: kept } };
}

/**
 * A settled choice whose runner-up measured within this factor of it is a close race: trials
 * interleave the candidates, and a candidate's calls right after another's run slower than back to
 * back (a GPU whose clocks fell while a worker pool ran, a pool whose threads slept while the GPU
 * ran), so such a race is run again back to back before the key settles (see confirmStep).
 */
export const DEFAULT_CLOSE_RACE = 1.5;

/** One side's calls back to back in a close race: `calls` undefined until its first timed call (after the untimed one that wakes it). */
export interface ConfirmBlock {
  readonly side: 'winner' | 'runnerUp';
  readonly calls?: TrialRun;
}

/**
 * A close race being confirmed for one key: blocks of calls back to back, the winner's first (as
 * it runs once settled, so they cost nothing), then, while the runner-up's trial is within
 * `closeRace` of that block, the runner-up's, the winner's and the runner-up's again, each after
 * one untimed call that wakes its side.
 */
export interface Confirmation {
  readonly winner: string;
  readonly runnerUp: string;
  readonly blocks?: readonly ConfirmBlock[];
}

export type ConfirmStep =
  /** Run the winner: untimed when `timed` is false (the runner-up ran since its last call). */
  | { readonly kind: 'confirm'; readonly name: string; readonly timed: boolean }
  /** Run the runner-up: untimed when `timed` is false (another candidate ran since its last call). */
  | { readonly kind: 'rematch'; readonly name: string; readonly timed: boolean }
  /** Settle on `name`, with `trials` holding the back-to-back times where measured. */
  | { readonly kind: 'done'; readonly name: string; readonly trials: ReadonlyMap<string, Trial> };

/**
 * The runner-up when the settled `choice` is a close race under `s` (times as rankedMs has them),
 * else undefined: the fastest candidate within `closeRace` of the winner on another backend, else
 * on the winner's own. Variants of one backend ran alike between the other backends' calls; it is
 * across backends that interleaved trials mislead.
 */
export function closeRunnerUp(choice: MeasuredChoice, work: number, s: ExploreSettings): string | undefined {
  const winner = pickName(choice);
  const own = choice.trials[winner];
  if (own === undefined) return undefined;
  const limit = rankedMs(winner, scaledMs(own, work)) * (s.closeRace ?? DEFAULT_CLOSE_RACE);
  let best: string | undefined;
  let bestMs = Infinity;
  let elsewhere: string | undefined;
  let elsewhereMs = Infinity;
  for (const [name, t] of Object.entries(choice.trials)) {
    const ms = rankedMs(name, scaledMs(t, work));
    if (name === winner || ms >= limit) continue;
    if (ms < bestMs) [best, bestMs] = [name, ms];
    if (backendOf(name) !== backendOf(winner) && ms < elsewhereMs) [elsewhere, elsewhereMs] = [name, ms];
  }
  return elsewhere ?? best;
}

/** The side of close race `c` that wins with these times: the runner-up only when faster (a worker pool by POOL_MARGIN). */
const raceWinner = (c: Confirmation, winner: Trial, runnerUp: Trial): string =>
  rankedMs(c.runnerUp, scaledMs(runnerUp, winner.work)) < rankedMs(c.winner, winner.ms) ? c.runnerUp : c.winner;

/**
 * The runner-up's time over the winner's from alternating blocks: the median, over each pair of
 * neighbouring blocks, of the runner-up's block time over the winner's. A shift of the machine's
 * speed between two blocks skews only the pairs across it.
 */
export function pairedRatio(blocks: readonly { readonly side: ConfirmBlock['side']; readonly calls: Trial }[]): number | undefined {
  const ratios: number[] = [];
  for (let i = 1; i < blocks.length; i++) {
    const [a, b] = [blocks[i - 1]!, blocks[i]!];
    if (a.side === b.side) continue;
    const [w, r] = a.side === 'winner' ? [a.calls, b.calls] : [b.calls, a.calls];
    ratios.push(scaledMs(r, w.work) / w.ms);
  }
  return ratios.length === 0 ? undefined : median(ratios);
}

/**
 * What a close race measured back to back, as one trial per side: the winner's time the geometric
 * mean of its blocks', the runner-up's that times pairedRatio (undefined where it had no block).
 */
export function confirmedTrials(c: Confirmation): { readonly winner?: Trial; readonly runnerUp?: Trial } {
  const done = (c.blocks ?? []).flatMap((b) => (b.calls === undefined ? [] : [{ side: b.side, calls: b.calls }]));
  const own = done.filter((b) => b.side === 'winner').map((b) => b.calls);
  if (own.length === 0) return {};
  const work = own[0]!.work;
  const winner: Trial = { ms: Math.exp(own.reduce((sum, t) => sum + Math.log(scaledMs(t, work)), 0) / own.length), work, calls: own.reduce((n, t) => n + t.calls, 0) };
  const ratio = pairedRatio(done);
  const theirs = done.filter((b) => b.side === 'runnerUp').map((b) => b.calls);
  if (ratio === undefined || theirs.length === 0) return { winner };
  return { winner, runnerUp: { ms: winner.ms * ratio, work, calls: theirs.reduce((n, t) => n + t.calls, 0) } };
}

/** All timed calls of `side` in close race `c` so far, as one trial run (what a route shows while the race runs). */
export function confirmSide(c: Confirmation, side: ConfirmBlock['side']): TrialRun | undefined {
  let all: TrialRun | undefined;
  for (const b of c.blocks ?? []) {
    if (b.side !== side || b.calls === undefined) continue;
    for (const ms of b.calls.samples) all = addTrialCall(all, ms, b.calls.work);
  }
  return all;
}

/**
 * The next step of a close race's confirmation: the winner's block first; the runner-up gets its
 * blocks only while its trial is within `closeRace` of that block (a winner faster back to back
 * than in its trial needs none); then blocks alternate until each side has CONFIRM_ROUNDS (see
 * blockComplete). The faster by pairedRatio wins (a worker pool by POOL_MARGIN).
 */
export function confirmStep(c: Confirmation, trials: ReadonlyMap<string, Trial>, s: ExploreSettings): ConfirmStep {
  const blocks = c.blocks ?? [];
  const last = blocks.at(-1);
  const step = (side: ConfirmBlock['side'], timed: boolean): ConfirmStep =>
    side === 'winner' ? { kind: 'confirm', name: c.winner, timed } : { kind: 'rematch', name: c.runnerUp, timed };
  if (last === undefined) return step('winner', true);
  if (!blockComplete(last.calls, s)) return step(last.side, true);
  const measured = confirmedTrials(c);
  const done = (name: string): ConfirmStep => {
    const out = new Map(trials);
    out.set(c.winner, measured.winner!);
    if (measured.runnerUp !== undefined) out.set(c.runnerUp, measured.runnerUp);
    return { kind: 'done', name, trials: out };
  };
  if (blocks.length === 1) {
    const runnerUpTrial = trials.get(c.runnerUp);
    const winner = last.calls!;
    if (runnerUpTrial === undefined || rankedMs(c.runnerUp, scaledMs(runnerUpTrial, winner.work)) >= rankedMs(c.winner, winner.ms) * (s.closeRace ?? DEFAULT_CLOSE_RACE)) return done(c.winner);
  }
  if (blocks.length >= 2 * CONFIRM_ROUNDS) return done(raceWinner(c, measured.winner!, measured.runnerUp!));
  return step(last.side === 'winner' ? 'runnerUp' : 'winner', false);
}

/**
 * The end of a close race run again in a later process (a settled choice from the cache whose
 * runner-up was within `closeRace`): each side timed again here counts as the geometric mean of its
 * cached trial and this process's (confirmedTrials), so neither one process's slow phase nor the other's
 * decides alone, and the faster so merged wins (a worker pool by POOL_MARGIN). `trials` is what
 * confirmStep's `done` returned.
 */
export function mergeRerace(cached: Readonly<Record<string, Trial>>, c: Confirmation, trials: ReadonlyMap<string, Trial>): { readonly name: string; readonly trials: ReadonlyMap<string, Trial> } {
  const out = new Map(trials);
  const fresh = confirmedTrials(c);
  for (const [name, mine] of [[c.winner, fresh.winner], [c.runnerUp, fresh.runnerUp]] as const) {
    const old = cached[name];
    if (mine === undefined || old === undefined) continue;
    out.set(name, { ms: Math.sqrt(scaledMs(old, mine.work) * mine.ms), work: mine.work, calls: old.calls + mine.calls });
  }
  const winner = out.get(c.winner);
  const runnerUp = out.get(c.runnerUp);
  if (winner === undefined || runnerUp === undefined) return { name: c.winner, trials: out };
  return { name: raceWinner(c, winner, runnerUp), trials: out };
}

/** `c` after a call of its step `step` that took `ms` (scaled to `work`): an untimed call opens its side's next block. */
export function confirmCall(c: Confirmation, step: Exclude<ConfirmStep, { kind: 'done' }>, ms: number, work: number): Confirmation {
  const side: ConfirmBlock['side'] = step.kind === 'confirm' ? 'winner' : 'runnerUp';
  const blocks = c.blocks ?? [];
  if (!step.timed) return { ...c, blocks: [...blocks, { side }] };
  const last = blocks.at(-1);
  if (last?.side !== side) return { ...c, blocks: [...blocks, { side, calls: addTrialCall(undefined, ms, work) }] };
  return { ...c, blocks: [...blocks.slice(0, -1), { side, calls: addTrialCall(last.calls, ms, work) }] };
}
