import { InvalidArgumentError } from './errors.js';

/**
 * Reads an enumerated environment variable, exactly as the matching command-line option reads
 * its value (no trimming, no case folding); an unknown value is an error naming the variable.
 */
export function readEnumEnv<T extends string>(name: string, allowed: readonly T[], env: NodeJS.ProcessEnv = process.env): T | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new InvalidArgumentError(name, `environment variable must be one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`);
  }
  return raw as T;
}
