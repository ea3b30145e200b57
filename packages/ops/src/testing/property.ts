import fc from 'fast-check';
import { DEFAULT_PROPERTY_RUNS, fcSeedFromEnv, propertyRunsFromEnv } from './env.js';

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
    const report = err instanceof Error ? err.message : String(err);
    throw new Error(`${report}\n\n${rerunHint(settings)}`, { cause: err });
  }
}
