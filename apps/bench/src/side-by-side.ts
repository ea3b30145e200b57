/**
 * The router beside the backends it chose between, in the router's own process: short blocks of
 * back-to-back calls each in turn (the order rotated every turn), so a process's speed, which on a
 * shared VM differs from one process to the next by far more than routing costs, is the same for
 * the router and for them, while each call still finds the caches as a loop of its own leaves them.
 */
import { median, errorMessage } from '@kernelkit/core';
import type { BackendName, OpArgs, OpName } from '@kernelkit/ops';
import { BACKEND_NAMES, type BackendLoaders } from 'kernelkit';
import { openBackend, type CallOutput, type Contender } from './backends.js';

/** The row's `sideBySide`: medians of interleaved calls in the router's process. */
export interface SideBySide {
  /** Turns: each contender ran one block of BLOCK_CALLS calls per turn, its first call untimed. */
  readonly turns: number;
  /** Calls per block (absent: 1, one call each per turn, in the reports of the first runs). */
  readonly blockCalls?: number;
  /**
   * Set instead of `blockCalls` by one trial run (2026-12-08): each block began with untimed calls
   * for this many ms (one at least), then `timedCalls` timed. The bench no longer times this way.
   */
  readonly leadInMs?: number;
  readonly timedCalls?: number;
  readonly routerMs: number;
  /** Where the router's calls here went (backend/variant: calls). */
  readonly routedTo: Readonly<Record<string, number>>;
  /** Each candidate called directly, by backend/variant: its median. */
  readonly direct: Readonly<Record<string, number>>;
}

/** Calls per contender per turn; the first of each block follows another contender's and is not timed. */
export const BLOCK_CALLS = 4;
/** Turns at least (fewer would not give a median of blocks), at most (enough at small sizes). */
const MIN_TURNS = 3;
const MAX_TURNS = 15;

/** The backend/variant pairs the router weighed for this call: its trials, and its pick. */
export function candidatesOf(route: CallOutput['route']): { readonly backend: BackendName; readonly variant: string }[] {
  const keys = new Set(Object.keys(route?.trials ?? {}));
  if (route?.backend !== undefined && route.variant !== undefined) keys.add(`${route.backend}/${route.variant}`);
  const out: { backend: BackendName; variant: string }[] = [];
  for (const k of keys) {
    const slash = k.indexOf('/');
    const backend = k.slice(0, slash) as BackendName;
    if (slash > 0 && BACKEND_NAMES.includes(backend)) out.push({ backend, variant: k.slice(slash + 1) });
  }
  return out;
}

/** Turns for calls of about `estMs` each, within `budgetMs` per contender. */
export const turnsFor = (estMs: number, budgetMs: number): number => Math.max(MIN_TURNS, Math.min(MAX_TURNS, Math.ceil(budgetMs / (BLOCK_CALLS * Math.max(estMs, 0.01)))));

interface Entry {
  readonly key: string;
  readonly run: () => Promise<CallOutput>;
}

/**
 * Opens each candidate as its own backend here (released before returning), warms it as its row
 * was warmed (`warm`), then times `turns` rounds of one block each: the router (already settled)
 * and every candidate. A candidate that fails to open or run is left out and named in `skipped`.
 * The candidates' outputs are checked in their own rows, not here.
 */
export async function measureSideBySide(
  router: Contender,
  op: OpName,
  args: OpArgs<OpName>,
  route: CallOutput['route'],
  o: {
    readonly threads: number | undefined;
    readonly loaders: BackendLoaders | undefined;
    readonly budgetMs: number;
    readonly warm: (b: Contender, variant: string, first: CallOutput) => Promise<void>;
  },
): Promise<{ readonly sideBySide?: SideBySide; readonly skipped: readonly string[] }> {
  const skipped: string[] = [];
  const opened: Contender[] = [];
  try {
    const entries: Entry[] = [{ key: 'kernelkit', run: () => router.call(op, args, {}) }];
    for (const c of candidatesOf(route)) {
      const key = `${c.backend}/${c.variant}`;
      const got = await openBackend(c.backend, o.threads, o.loaders);
      if (got.status !== 'ok') {
        skipped.push(`${key}: ${got.reason}`);
        continue;
      }
      opened.push(got.backend);
      try {
        const first = await got.backend.call(op, args, { variant: c.variant });
        await o.warm(got.backend, c.variant, first);
        entries.push({ key, run: () => got.backend.call(op, args, { variant: c.variant }) });
      } catch (err) {
        skipped.push(`${key}: ${errorMessage(err)}`);
      }
    }
    if (entries.length < 2) return { skipped };
    let estMs = 0;
    for (const e of entries) {
      const t = performance.now();
      await e.run();
      estMs = Math.max(estMs, performance.now() - t);
    }
    const turns = turnsFor(estMs, o.budgetMs);
    const times = entries.map(() => [] as number[]);
    const routedTo: Record<string, number> = {};
    for (let i = 0; i < turns; i++) {
      for (let j = 0; j < entries.length; j++) {
        const at = (i + j) % entries.length;
        for (let k = 0; k < BLOCK_CALLS; k++) {
          const t = performance.now();
          const out = await entries[at]!.run();
          if (k > 0) times[at]!.push(performance.now() - t);
          if (at === 0 && out.route?.backend !== undefined) {
            const to = `${out.route.backend}/${out.route.variant ?? ''}`;
            routedTo[to] = (routedTo[to] ?? 0) + 1;
          }
        }
      }
    }
    const direct = Object.fromEntries(entries.slice(1).map((e, i) => [e.key, median(times[i + 1]!)]));
    return { sideBySide: { turns, blockCalls: BLOCK_CALLS, routerMs: median(times[0]!), routedTo, direct }, skipped };
  } finally {
    for (const b of opened) await b.dispose().catch(() => {});
  }
}

/** The router's median over the fastest candidate's, side by side. */
export const sideBySideRatio = (s: SideBySide): number => s.routerMs / Math.min(...Object.values(s.direct));
