import fc from 'fast-check';
import { DEFAULT_PROPERTY_RUNS, fcSeedFromEnv, propertyRunsFromEnv } from './env.js';
import { errorMessage } from '@kernelkit/core';

/** Runs and seed of a suite's properties: KERNELKIT_FC_RUNS beats the suite's own count, which beats the CI floor. */
export interface PropertySettings {
  readonly runs: number;
  readonly seed: number;
}

export function propertySettings(suiteRuns?: number): PropertySettings {
  return { runs: propertyRunsFromEnv() ?? suiteRuns ?? DEFAULT_PROPERTY_RUNS, seed: fcSeedFromEnv() };
}

/** The line appended to a failing property's report: how to get the same cases again. */
export function rerunHint({ runs, seed }: PropertySettings): string {
  return (
    `kernelkit: KERNELKIT_FC_SEED=${seed}, KERNELKIT_FC_RUNS=${runs}. Re-run with\n` +
    `  KERNELKIT_FC_SEED=${seed} KERNELKIT_FC_RUNS=${runs} npm run fuzz\n` +
    `or, in this package, KERNELKIT_FC_SEED=${seed} KERNELKIT_FC_RUNS=${runs} npx vitest run -t property`
  );
}

/**
 * `fc.assert` with the suite's runs and seed. On failure it rethrows fast-check's report (seed,
 * path, counterexample, shrinks) with our environment values and the re-run command appended,
 * the original error as `cause`.
 */
export async function assertProperty<T>(property: fc.IAsyncProperty<T>, settings: PropertySettings): Promise<void> {
  try {
    await fc.assert(property, { numRuns: settings.runs, seed: settings.seed });
  } catch (err) {
    const report = errorMessage(err);
    throw new Error(`${report}\n\n${rerunHint(settings)}`, { cause: err });
  }
}

/**
 * The argument object in one of three forms: as it is, behind getters, or behind a Proxy; in
 * the last two every field answers something else (wrong sizes, other arrays) after its first
 * read, so a call that reads a field twice computes garbage or is refused.
 */
export type ArgumentForm = 'plain' | 'getters' | 'proxy';

function poisoned(value: unknown): unknown {
  if (typeof value === 'number') return value * 1000 + 1;
  if (ArrayBuffer.isView(value)) return new Float32Array(1);
  if (Array.isArray(value)) return [];
  if (typeof value === 'boolean') return !value;
  return undefined;
}

export function wrapArguments<T extends object>(args: T, form: ArgumentForm): T {
  if (form === 'plain') return args;
  const seen = new Set<PropertyKey>();
  const answer = (key: PropertyKey, value: unknown): unknown => {
    if (seen.has(key)) return poisoned(value);
    seen.add(key);
    return value;
  };
  if (form === 'proxy') return new Proxy(args, { get: (t, k, r) => answer(k, Reflect.get(t, k, r)) });
  const wrapped = {} as T;
  for (const [key, value] of Object.entries(args)) Object.defineProperty(wrapped, key, { enumerable: true, get: () => answer(key, value) });
  return wrapped;
}

/** When the call's signal aborts: never (no signal), before the call, or after `ms` milliseconds. */
export type AbortTiming = { readonly kind: 'none' } | { readonly kind: 'before' } | { readonly kind: 'after'; readonly ms: number };

export const abortTimings: fc.Arbitrary<AbortTiming> = fc.oneof(
  fc.constant<AbortTiming>({ kind: 'none' }),
  fc.constant<AbortTiming>({ kind: 'before' }),
  fc.integer({ min: 0, max: 8 }).map((ms): AbortTiming => ({ kind: 'after', ms })),
);

/** A signal that fires at `timing` (undefined for none), and a function that cancels a pending abort. */
export function signalAt(timing: AbortTiming): { signal: AbortSignal | undefined; cancel: () => void } {
  if (timing.kind === 'none') return { signal: undefined, cancel: () => {} };
  const ac = new AbortController();
  if (timing.kind === 'before') {
    ac.abort(new Error('aborted before the call'));
    return { signal: ac.signal, cancel: () => {} };
  }
  const t = setTimeout(() => ac.abort(new Error(`aborted after ${timing.ms} ms`)), timing.ms);
  return { signal: ac.signal, cancel: () => clearTimeout(t) };
}
