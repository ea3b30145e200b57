import { randomInt } from 'node:crypto';
import { InvalidArgumentError } from '@kernelkit/core';

/**
 * Test knobs read from the environment. A value that is set but malformed is an error naming
 * the variable (a typo must not silently fall back to the CI defaults).
 */

/** fast-check runs per property when KERNELKIT_FC_RUNS is unset: the CI floor. */
export const DEFAULT_PROPERTY_RUNS = 200;
/** The fixed seed CI uses, so every CI run checks the same cases. */
export const DEFAULT_FC_SEED = 20261122;

/** A positive integer from `name`, or undefined when unset or empty. */
export function readPositiveIntEnv(name: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const v = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(v) || v < 1) {
    throw new InvalidArgumentError(name, `environment variable must be a positive integer, got ${JSON.stringify(raw)}`);
  }
  return v;
}

/** KERNELKIT_FC_RUNS, when set: overrides every suite's property run count (the `fuzz` script sets it). */
export function propertyRunsFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  return readPositiveIntEnv('KERNELKIT_FC_RUNS', env);
}

let randomSeed: number | undefined;

/**
 * KERNELKIT_FC_SEED: a 32-bit integer, or `random` for a fresh seed per process (the same one for
 * every property of the process, shown in each property test's name). Default: DEFAULT_FC_SEED.
 */
export function fcSeedFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.KERNELKIT_FC_SEED?.trim();
  if (raw === undefined || raw === '') return DEFAULT_FC_SEED;
  if (raw.toLowerCase() === 'random') return (randomSeed ??= randomInt(0, 2 ** 31 - 1));
  const v = Number(raw);
  if (!/^-?\d+$/.test(raw) || v < -(2 ** 31) || v > 2 ** 31 - 1) {
    throw new InvalidArgumentError('KERNELKIT_FC_SEED', `environment variable must be a 32-bit integer or "random", got ${JSON.stringify(env.KERNELKIT_FC_SEED)}`);
  }
  return v;
}

/** KERNELKIT_LIFETIME_CYCLES, when set: overrides every lifetime test's cycle count. */
export function lifetimeCyclesFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  return readPositiveIntEnv('KERNELKIT_LIFETIME_CYCLES', env);
}
