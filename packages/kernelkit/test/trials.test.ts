import { describe, expect, it } from 'vitest';
import {
  addTrialCall, closeRunnerUp, CONFIRM_ROUNDS, RETRIAL_FACTOR, pairedRatio, POOL_MARGIN, TRIAL_CALLS, confirmCall, confirmStep, decide, mergeRerace, nextTurn, pickName, POOL_MARGIN_MAX_MS, trialTime, type Confirmation, type ConfirmStep, type ExploreSettings, type MeasuredChoice, type Pick, type Trial, type TrialRun, type Turn,
} from '../src/router/explore.js';

/**
 * The router's exploring loop without backends or clocks: `decide` picks, a candidate's first
 * pick is its untimed warm-up (as Router.choose has it), and each later one is timed at
 * `callMs(name, i)` for its i-th timed call; turns are kept as Router does. Returns the steps up to the settled one.
 */
function explore(ranked: readonly Pick[], callMs: (name: string, i: number) => number, s: ExploreSettings, work = 1000, warmUpMs?: (name: string) => number): { steps: string[]; trials: Map<string, TrialRun>; choice?: MeasuredChoice } {
  const trials = new Map<string, TrialRun>();
  const warm = new Set<string>();
  // With `warmUpMs`, decide sees each warm-up's time, as Router passes it.
  const warmUps = new Map<string, { ms: number; work: number }>();
  const steps: string[] = [];
  const retried = new Set<string>();
  let turn: Turn | undefined;
  for (let n = 0; n < 200; n++) {
    const d = decide(ranked, trials, work, s, turn, warmUpMs === undefined ? undefined : warmUps, retried)!;
    const name = pickName(d.pick);
    if (d.kind !== 'explore') {
      steps.push(`${d.kind} ${name}`);
      return { steps, trials, ...(d.kind === 'settled' ? { choice: d.choice } : {}) };
    }
    if (d.retrial === true) {
      trials.delete(name);
      retried.add(name);
      steps.push(`retrial ${name}`);
    }
    if (!warm.has(name)) {
      warm.add(name);
      if (warmUpMs !== undefined) warmUps.set(name, { ms: warmUpMs(name), work });
      steps.push(`warm-up ${name}`);
      turn = nextTurn(turn, name, undefined);
      continue;
    }
    const t = trials.get(name);
    const ms = callMs(name, t?.calls ?? 0);
    trials.set(name, addTrialCall(t, ms, work));
    turn = nextTurn(turn, name, ms);
    steps.push(`trial ${name}`);
  }
  throw new Error('did not settle in 200 calls');
}

const pick = (name: Pick['name'], predictedMs: number): Pick => ({ name, variant: 'v', predictedMs, startMs: 0 });
// Two timed calls at least keep the pinned sequences short; the default (TRIAL_CALLS) has its own test.
const DEFAULTS: ExploreSettings = { factor: 8, trialMaxMs: 2000, trialCalls: 2 };
const counts = (trials: ReadonlyMap<string, TrialRun>): Record<string, number> => Object.fromEntries([...trials].map(([k, t]) => [k, t.calls]));
const steady = (ms: Record<string, number>) => (name: string): number => ms[name]!;

describe('trials', () => {
  it(`a trial over RETRIAL_FACTOR (${RETRIAL_FACTOR}) times its prediction runs once more before the key settles; the second stands`, () => {
    const ranked = [pick('webgpu', 6), pick('piscina', 7)];
    const QUICK: ExploreSettings = { ...DEFAULTS, trialMinMs: 0 };
    // piscina's first trial caught a stall (300 ms a call against 7 predicted); run again, it measures 1.6.
    const stalled = (name: string, i: number, second: boolean): number => (name === 'webgpu/v' ? 2.2 : second ? 1.6 : 300 + i);
    let runs = 0;
    const out = explore(ranked, (name, i) => {
      if (name === 'piscina/v' && i === 0) runs++;
      return stalled(name, i, runs > 1);
    }, QUICK);
    expect(out.steps).toEqual(['warm-up webgpu/v', 'trial webgpu/v', 'trial webgpu/v', 'warm-up piscina/v', 'trial piscina/v', 'trial piscina/v', 'retrial piscina/v', 'trial piscina/v', 'trial piscina/v', 'settled piscina/v']);
    expect(out.choice?.trials['piscina/v']).toMatchObject({ ms: 1.6, calls: 2 });
    // Slow again when run again: it counts, once, and the key settles on the faster.
    const again = explore(ranked, (name, i) => (name === 'webgpu/v' ? 2.2 : 300 + i), QUICK);
    expect(again.steps.filter((x) => x.startsWith('retrial'))).toEqual(['retrial piscina/v']);
    expect(again.steps.at(-1)).toBe('settled webgpu/v');
    expect(again.choice?.trials['piscina/v']).toMatchObject({ calls: 2 });
    // Slow as predicted (10 times or less): no retrial.
    const slow = explore([pick('webgpu', 6), pick('piscina', 30)], (name) => (name === 'webgpu/v' ? 2.2 : 60), QUICK);
    expect(slow.steps.some((x) => x.startsWith('retrial'))).toBe(false);
    expect(slow.steps.at(-1)).toBe('settled webgpu/v');
  });

  it("a trial's time is the median of its later half of calls (of two, the second)", () => {
    expect(trialTime([5])).toBe(5);
    expect(trialTime([7, 5])).toBe(5);
    expect(trialTime([5, 7])).toBe(7);
    expect(trialTime([1, 9, 5])).toBe(7);
    expect(trialTime([1, 9, 5, 2])).toBe(3.5);
    // Sixteen calls: the later eight are 12, 5, 11, 6, 10, 7, 9, 8; their median 8.5.
    expect(trialTime([16, 1, 15, 2, 14, 3, 13, 4, 12, 5, 11, 6, 10, 7, 9, 8])).toBe(8.5);
    // A backend still warming up at this size: its early calls do not count, however fast one was.
    expect(trialTime([12, 4, 12, 10, 7, 6, 7, 6])).toBe(6.5);
    // A candidate whose calls vary widely is ranked by its typical call, not its lucky ones.
    expect(trialTime([0, 0, 0, 0, 30, 30, 50, 50])).toBe(40);
  });

  it('folds calls of other sizes in at the size of the first: each scaled by work', () => {
    const t = addTrialCall(addTrialCall(undefined, 10, 1000), 30, 2000);
    expect(t).toEqual({ ms: 15, work: 1000, calls: 2, samples: [10, 15], timedMs: 40 });
  });

  it('short calls get more timed calls until they add up to trialMinMs; long calls get TRIAL_CALLS', () => {
    // Predicted alike (all within the factor of the best), measured 3, 30 and 100 ms a call.
    const ranked = [pick('cpu', 10), pick('piscina', 12), pick('webgpu', 15)];
    // Factor 50: none of them is hopeless (see the test of that below).
    const wide = { ...DEFAULTS, factor: 50 };
    const { trials, steps } = explore(ranked, steady({ 'cpu/v': 3, 'piscina/v': 30, 'webgpu/v': 100 }), wide);
    // 3 ms calls: 84 would add up to 252 ms, the first past 250, but TRIAL_MAX_CALLS (40) stops them; 30 ms calls: 9 (270 ms); 100 ms calls: 3.
    expect(counts(trials)).toEqual({ 'cpu/v': 40, 'piscina/v': 9, 'webgpu/v': 3 });
    expect(steps.at(-1)).toBe('settled cpu/v');
    // By default a long call gets TRIAL_CALLS (4) however long it takes.
    expect(TRIAL_CALLS).toBe(4);
    expect(counts(explore(ranked, steady({ 'cpu/v': 3, 'piscina/v': 30, 'webgpu/v': 100 }), { factor: 50, trialMaxMs: 2000 }).trials)).toEqual({ 'cpu/v': 40, 'piscina/v': 9, 'webgpu/v': 4 });
    // A smaller minimum asks fewer calls of the short candidate, never fewer than trialCalls.
    expect(counts(explore(ranked, steady({ 'cpu/v': 3, 'piscina/v': 30, 'webgpu/v': 100 }), { ...wide, trialMinMs: 10 }).trials)).toEqual({ 'cpu/v': 4, 'piscina/v': 2, 'webgpu/v': 2 });
    expect(counts(explore(ranked, steady({ 'cpu/v': 3, 'piscina/v': 30, 'webgpu/v': 100 }), { ...wide, trialMinMs: 0, trialCalls: 3 }).trials)).toEqual({ 'cpu/v': 3, 'piscina/v': 3, 'webgpu/v': 3 });
  });

  it('caps a trial at TRIAL_MAX_CALLS (40) timed calls, or trialMaxCalls', () => {
    const ranked = [pick('cpu', 0.1), pick('piscina', 0.2)];
    const ms = steady({ 'cpu/v': 0.1, 'piscina/v': 0.2 });
    expect(counts(explore(ranked, ms, DEFAULTS).trials)).toEqual({ 'cpu/v': 40, 'piscina/v': 40 });
    expect(counts(explore(ranked, ms, { ...DEFAULTS, trialMaxCalls: 5 }).trials)).toEqual({ 'cpu/v': 5, 'piscina/v': 5 });
  });

  it('candidates take turns of calls adding up to trialRunMs; the next turn goes to another open trial, the one with the fewest timed ms', () => {
    const ranked = [pick('cpu', 10), pick('piscina', 20), pick('webgpu', 30)];
    const { steps } = explore(ranked, steady({ 'cpu/v': 10, 'piscina/v': 20, 'webgpu/v': 5 }), { ...DEFAULTS, trialMinMs: 30, trialRunMs: 15 });
    expect(steps).toEqual([
      // Turns of 15 ms: cpu's two 10 ms calls, piscina's one 20 ms call, webgpu's three 5 ms calls (a warm-up starts a turn and counts no ms).
      'warm-up cpu/v', 'trial cpu/v', 'trial cpu/v',
      'warm-up piscina/v', 'trial piscina/v',
      'warm-up webgpu/v', 'trial webgpu/v', 'trial webgpu/v', 'trial webgpu/v',
      // webgpu has the fewest timed ms (15) but its turn just ended: cpu (20, before piscina in predicted
      // order) takes it, and its third call completes its trial (30 ms).
      'trial cpu/v',
      'trial webgpu/v', 'trial webgpu/v', 'trial webgpu/v',
      'trial piscina/v',
      'settled webgpu/v',
    ]);
    // trialRunMs 0: turns of one timed call (a warm-up and its first timed call share one).
    const single = explore(ranked, steady({ 'cpu/v': 10, 'piscina/v': 20, 'webgpu/v': 5 }), { ...DEFAULTS, trialMinMs: 30, trialRunMs: 0 }).steps;
    expect(single.slice(0, 9)).toEqual(['warm-up cpu/v', 'trial cpu/v', 'warm-up piscina/v', 'trial piscina/v', 'warm-up webgpu/v', 'trial webgpu/v', 'trial cpu/v', 'trial webgpu/v', 'trial cpu/v']);
  });

  it('settles on the fastest typical call: cold first calls and one lucky call do not decide', () => {
    const ranked = [pick('piscina', 3), pick('webgpu', 3)];
    // webgpu's first two calls are cold (clocks ramping), then 2 ms; piscina is a steady 3 ms.
    // Two timed calls would keep webgpu's 8 ms against piscina's 3.
    const cold = (name: string, i: number): number => (name === 'webgpu/v' ? (i < 2 ? [9, 8][i]! : 2) : 3);
    const a = explore(ranked, cold, DEFAULTS);
    expect(a.steps.at(-1)).toBe('settled webgpu/v');
    expect(a.choice!.trials).toEqual({ 'piscina/v': { ms: 3, work: 1000, calls: 40 }, 'webgpu/v': { ms: 2, work: 1000, calls: 40 } });
    // piscina's one lucky 1 ms call among steady 5 ms ones loses to webgpu's steady 3 ms.
    const lucky = (name: string, i: number): number => (name === 'piscina/v' ? (i === 0 ? 1 : 5) : 3);
    expect(explore(ranked, lucky, DEFAULTS).steps.at(-1)).toBe('settled webgpu/v');
    // Of two calls the second counts: the lucky first one does not decide there either.
    expect(explore(ranked, lucky, { ...DEFAULTS, trialMinMs: 0, trialCalls: 2 }).steps.at(-1)).toBe('settled webgpu/v');
  });

  it('a trial once begun runs to its end, even when its own calls push it past the factor of the best', () => {
    // piscina is predicted 20 ms and measured 3 ms: its prediction is then over 6× the best measured.
    const ranked = [pick('cpu', 10), pick('piscina', 20)];
    const { trials } = explore(ranked, steady({ 'cpu/v': 10, 'piscina/v': 3 }), { ...DEFAULTS, factor: 4 });
    expect(counts(trials)).toEqual({ 'cpu/v': 25, 'piscina/v': 40 });
  });

  it("ends a hopeless trial: once even the fastest of two or more timed calls took over `factor` times another candidate's best", () => {
    // cpu is predicted first but measures 10× piscina: after piscina's calls its trial stops (5 calls, 50 ms).
    const ranked = [pick('cpu', 10), pick('piscina', 20)];
    const { trials, steps } = explore(ranked, steady({ 'cpu/v': 10, 'piscina/v': 1 }), { ...DEFAULTS, factor: 4 });
    expect(counts(trials)).toEqual({ 'cpu/v': 5, 'piscina/v': 40 });
    expect(steps.at(-1)).toBe('settled piscina/v');
    // One cold call does not end a trial: the fastest of two counts.
    const cold = (name: string, i: number): number => (name === 'webgpu/v' ? (i === 0 ? 50 : 4) : 3);
    const warmingUp = explore([pick('piscina', 3), pick('webgpu', 3)], cold, { ...DEFAULTS, factor: 4, trialRunMs: 0 });
    expect(counts(warmingUp.trials)['webgpu/v']).toBeGreaterThan(1);
    // The convLayer L1 B=10000 case on the H100 host: cpu's calls of 2.0 and 1.3 s against the worker pool's 135 ms end its trial there.
    const big = explore([pick('webgpu', 150), pick('piscina', 160), pick('cpu', 1000)], (name, i) => ({ 'webgpu/v': 165, 'piscina/v': 135, 'cpu/v': [2047, 1285, 1228, 1775][i]! })[name]!, DEFAULTS, 1000);
    expect(counts(big.trials)['cpu/v']).toBe(2);
    expect(big.steps.at(-1)).toBe('settled piscina/v');
  });

  it('a warm-up call over `factor` times the best counts as one of the two calls that make a trial hopeless', () => {
    // The stencil3d N=512 case on the H200 host: cpu's 3.4 s calls against WebGPU's 150 ms.
    const ranked = [pick('webgpu', 45), pick('piscina', 540), pick('cpu', 1000)];
    const ms = steady({ 'webgpu/v': 150, 'piscina/v': 376, 'cpu/v': 3427 });
    const withWarmUp = explore(ranked, ms, DEFAULTS, 1000, ms);
    expect(counts(withWarmUp.trials)['cpu/v']).toBe(1);
    expect(withWarmUp.steps.at(-1)).toBe('settled webgpu/v');
    // Without the warm-up's time it takes two timed calls.
    expect(counts(explore(ranked, ms, DEFAULTS).trials)['cpu/v']).toBe(2);
    // A slow (cold) warm-up and one fast timed call: not hopeless, the trial goes on.
    const cold = explore([pick('piscina', 3), pick('webgpu', 3)], steady({ 'piscina/v': 3, 'webgpu/v': 4 }), { ...DEFAULTS, factor: 4, trialRunMs: 0 }, 1000, (name) => (name === 'webgpu/v' ? 50 : 3));
    expect(counts(cold.trials)['webgpu/v']).toBeGreaterThan(1);
    // A slow timed call after a fast warm-up: the fastest of the two is within the factor.
    const hiccup = explore([pick('piscina', 3), pick('webgpu', 3)], (name, i) => (name === 'webgpu/v' && i === 0 ? 50 : 3), { ...DEFAULTS, factor: 4, trialRunMs: 0 }, 1000, () => 3);
    expect(counts(hiccup.trials)['webgpu/v']).toBeGreaterThan(1);
  });

  it('gives no trial to a candidate predicted beyond the factor or over trialMaxMs, and settles without it', () => {
    // webgpu is within 4× of cpu but predicted over trialMaxMs; piscina is beyond 4×.
    const ranked = [pick('cpu', 10), pick('webgpu', 35), pick('piscina', 200)];
    const { steps, trials } = explore(ranked, steady({ 'cpu/v': 10, 'piscina/v': 1, 'webgpu/v': 1 }), { ...DEFAULTS, factor: 4, trialMaxMs: 30 });
    expect(counts(trials)).toEqual({ 'cpu/v': 25 });
    expect(steps.at(-1)).toBe('settled cpu/v');
  });

  it('settles on a worker pool only when it measures POOL_MARGIN faster than the next candidate', () => {
    const ranked = [pick('piscina', 9), pick('cpu', 10)];
    const near = explore(ranked, steady({ 'cpu/v': 10, 'piscina/v': (10 / POOL_MARGIN) * 1.01 }), DEFAULTS);
    expect(near.steps.at(-1)).toBe('settled cpu/v');
    const clear = explore(ranked, steady({ 'cpu/v': 10, 'piscina/v': (10 / POOL_MARGIN) * 0.99 }), DEFAULTS);
    expect(clear.steps.at(-1)).toBe('settled piscina/v');
    // Between two that are not pools, the faster by any amount.
    expect(explore([pick('cpu', 10), pick('webgpu', 10)], steady({ 'cpu/v': 10, 'webgpu/v': 9.9 }), DEFAULTS).steps.at(-1)).toBe('settled webgpu/v');
  });

  it('a worker pool measuring POOL_MARGIN_MAX_MS or more per call ranks by its time, and below it by at most that', () => {
    const long = POOL_MARGIN_MAX_MS * 1.5;
    const ranked = [pick('piscina', long), pick('webgpu', long)];
    expect(explore(ranked, steady({ 'webgpu/v': long, 'piscina/v': long * 0.99 }), DEFAULTS).steps.at(-1)).toBe('settled piscina/v');
    expect(explore(ranked, steady({ 'webgpu/v': long, 'piscina/v': long * 1.01 }), DEFAULTS).steps.at(-1)).toBe('settled webgpu/v');
    // Just under the bound the margin is capped there: a pool at 95% of it beats a rival just over it, not one under it.
    const near = [pick('piscina', POOL_MARGIN_MAX_MS), pick('webgpu', POOL_MARGIN_MAX_MS)];
    expect(explore(near, steady({ 'webgpu/v': POOL_MARGIN_MAX_MS * 1.01, 'piscina/v': POOL_MARGIN_MAX_MS * 0.95 }), DEFAULTS).steps.at(-1)).toBe('settled piscina/v');
    expect(explore(near, steady({ 'webgpu/v': POOL_MARGIN_MAX_MS * 0.99, 'piscina/v': POOL_MARGIN_MAX_MS * 0.95 }), DEFAULTS).steps.at(-1)).toBe('settled webgpu/v');
  });

  it('a close race: the runner-up within closeRace (default 1.5) of the winner, per unit of work', () => {
    const choice = (trials: Record<string, Trial>): MeasuredChoice => ({ backend: 'cpu', variant: 'v', trials });
    const t = (ms: number, work = 1000): Trial => ({ ms, work, calls: 2 });
    expect(closeRunnerUp(choice({ 'cpu/v': t(10), 'piscina/v': t(14), 'webgpu/v': t(12) }), 1000, DEFAULTS)).toBe('webgpu/v');
    expect(closeRunnerUp(choice({ 'cpu/v': t(10), 'piscina/v': t(15) }), 1000, DEFAULTS)).toBeUndefined();
    // Measured at twice the work: 24 ms there is 12 at this call's.
    expect(closeRunnerUp(choice({ 'cpu/v': t(10), 'piscina/v': t(24, 2000) }), 1000, DEFAULTS)).toBe('piscina/v');
    expect(closeRunnerUp(choice({ 'cpu/v': t(10), 'piscina/v': t(11) }), 1000, { ...DEFAULTS, closeRace: 1 })).toBeUndefined();
    expect(closeRunnerUp(choice({ 'cpu/v': t(10) }), 1000, DEFAULTS)).toBeUndefined();
    // Another backend's candidate within closeRace comes before a faster variant of the winner's own backend.
    const winner: MeasuredChoice = { backend: 'webgpu', variant: 'auto', trials: { 'webgpu/auto': t(143), 'webgpu/gemm': t(145), 'piscina/v': t(139) } };
    expect(closeRunnerUp(winner, 1000, DEFAULTS)).toBe('piscina/v');
    expect(closeRunnerUp({ ...winner, trials: { ...winner.trials, 'piscina/v': t(300) } }, 1000, DEFAULTS)).toBe('webgpu/gemm');
  });

  it("confirms a close race: the winner's calls back to back, then the runner-up's after an untimed wake-up, the faster winning", () => {
    const s: ExploreSettings = { ...DEFAULTS, trialMinMs: 0 };
    const trials = new Map<string, Trial>([['cpu/v', { ms: 10, work: 1000, calls: 2 }], ['webgpu/v', { ms: 14, work: 1000, calls: 2 }]]);
    const run = (c0: Confirmation, ms: Record<string, number>): { steps: string[]; done: Extract<ConfirmStep, { kind: 'done' }> } => {
      let c = c0;
      const steps: string[] = [];
      for (;;) {
        const step = confirmStep(c, trials, s);
        if (step.kind === 'done') return { steps, done: step };
        steps.push(`${step.kind}${step.timed ? '' : ' (untimed)'} ${step.name}`);
        c = confirmCall(c, step, ms[step.name]!, 1000);
      }
    };
    const race = { winner: 'cpu/v', runnerUp: 'webgpu/v' };
    // webgpu runs 8 ms back to back: it wins, and the settled trials are the back-to-back times.
    // The sides alternate in blocks of a trial's calls (trialCalls 2 here), CONFIRM_ROUNDS each, every block after the first woken by an untimed call.
    const won = run(race, { 'cpu/v': 10, 'webgpu/v': 8 });
    const block = (step: string): string[] => Array<string>(2).fill(step);
    expect(won.steps).toEqual([
      ...block('confirm cpu/v'), 'rematch (untimed) webgpu/v', ...block('rematch webgpu/v'),
      'confirm (untimed) cpu/v', ...block('confirm cpu/v'), 'rematch (untimed) webgpu/v', ...block('rematch webgpu/v'),
    ]);
    expect(CONFIRM_ROUNDS).toBe(2);
    expect(won.done.name).toBe('webgpu/v');
    const wonMs = Object.fromEntries([...won.done.trials].map(([k, v]) => [k, v.ms]));
    expect(wonMs['cpu/v']).toBeCloseTo(10, 10);
    expect(wonMs['webgpu/v']).toBeCloseTo(8, 10);
    expect(won.done.trials.get('webgpu/v')!.calls).toBe(4);
    // Slower back to back too: the winner stays.
    expect(run(race, { 'cpu/v': 10, 'webgpu/v': 11 }).done.name).toBe('cpu/v');
    // The winner back to back at 6 ms: webgpu's 14 is past 1.5 x 6, so no rematch.
    const clear = run(race, { 'cpu/v': 6, 'webgpu/v': 1 });
    expect(clear.steps).toEqual(Array<string>(2).fill('confirm cpu/v'));
    expect(clear.done.name).toBe('cpu/v');
    expect(clear.done.trials.get('webgpu/v')!.ms).toBe(14);
  });

  it('a close race is decided by the median ratio of neighbouring blocks: a shift of the machine between two blocks does not decide it', () => {
    const b = (side: 'winner' | 'runnerUp', ms: number) => ({ side, calls: { ms, work: 1000, calls: 4 } });
    // The runner-up runs at 0.8 of the winner throughout; the machine is 1.5x slower for R1 and W2.
    // One block each (W1 against R1) would say 1.2 and keep the winner.
    expect(pairedRatio([b('winner', 10), b('runnerUp', 12), b('winner', 15), b('runnerUp', 8)])).toBeCloseTo(0.8, 10);
    // Each pair is the runner-up's time over the winner's, whichever ran first; calls at another work are scaled to the winner's.
    expect(pairedRatio([b('runnerUp', 9), b('winner', 10)])).toBeCloseTo(0.9, 10);
    expect(pairedRatio([b('winner', 10), { side: 'runnerUp', calls: { ms: 18, work: 2000, calls: 4 } }])).toBeCloseTo(0.9, 10);
    expect(pairedRatio([b('winner', 10)])).toBeUndefined();
  });

  it('a close race run again from the cache: each side timed again counts as the geometric mean of its cached and new time', () => {
    const t = (ms: number, calls = 4, work = 1000): Trial => ({ ms, work, calls });
    const run = (ms: number, calls = 4): TrialRun => ({ ...t(ms, calls), samples: [], timedMs: ms * calls });
    const cached = { 'cpu/v': t(8), 'webgpu/v': t(10), 'piscina/v': t(30) };
    // Alone this process would pick webgpu (10 against 11); merged, cpu's sqrt(8 x 11) ≈ 9.4 keeps the key.
    const kept = mergeRerace(cached, { winner: 'cpu/v', runnerUp: 'webgpu/v', blocks: [{ side: 'winner', calls: run(11) }, { side: 'runnerUp', calls: run(10) }] }, new Map(Object.entries(cached)));
    expect(kept.name).toBe('cpu/v');
    expect(kept.trials.get('cpu/v')).toEqual({ ms: Math.sqrt(88), work: 1000, calls: 8 });
    expect(kept.trials.get('webgpu/v')!.ms).toBeCloseTo(10, 10);
    // What was not timed again (piscina here) stays as cached.
    expect(kept.trials.get('piscina/v')).toEqual(t(30));
    // A cached trial at twice the work is scaled to this call's before merging.
    expect(mergeRerace({ ...cached, 'cpu/v': t(16, 4, 2000) }, { winner: 'cpu/v', runnerUp: 'webgpu/v', blocks: [{ side: 'winner', calls: run(11) }] }, new Map()).trials.get('cpu/v')!.ms).toBeCloseTo(Math.sqrt(88), 10);
    // Faster in both processes, webgpu takes it.
    expect(mergeRerace(cached, { winner: 'cpu/v', runnerUp: 'webgpu/v', blocks: [{ side: 'winner', calls: run(20) }, { side: 'runnerUp', calls: run(8) }] }, new Map(Object.entries(cached))).name).toBe('webgpu/v');
    // Without a rematch (the winner clear of the runner-up back to back) the runner-up's cached trial counts as it is.
    expect(mergeRerace(cached, { winner: 'cpu/v', runnerUp: 'webgpu/v', blocks: [{ side: 'winner', calls: run(6) }] }, new Map(Object.entries(cached))).name).toBe('cpu/v');
    // A worker pool must win by POOL_MARGIN here too: merged 9.5 against cpu's 10 is not enough.
    const pool = { 'cpu/v': t(10), 'piscina/v': t(9.5) };
    expect(mergeRerace(pool, { winner: 'cpu/v', runnerUp: 'piscina/v', blocks: [{ side: 'winner', calls: run(10) }, { side: 'runnerUp', calls: run(9.5) }] }, new Map(Object.entries(pool))).name).toBe('cpu/v');
  });

  it('a worker pool wins a rematch only by POOL_MARGIN', () => {
    const s: ExploreSettings = { ...DEFAULTS, trialMinMs: 0 };
    const trials = new Map<string, Trial>([['cpu/v', { ms: 10, work: 1000, calls: 2 }], ['piscina/v', { ms: 10.5, work: 1000, calls: 2 }]]);
    const finish = (pool: number): string => {
      let c: Confirmation = { winner: 'cpu/v', runnerUp: 'piscina/v' };
      for (;;) {
        const step = confirmStep(c, trials, s);
        if (step.kind === 'done') return step.name;
        c = confirmCall(c, step, step.name === 'cpu/v' ? 10 : pool, 1000);
      }
    };
    expect(finish(9.5)).toBe('cpu/v');
    expect(finish(10 / POOL_MARGIN - 0.1)).toBe('piscina/v');
  });
});
