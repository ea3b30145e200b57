import { InvalidArgumentError } from './errors.js';

/** Reads an enumerated environment variable; an unknown value is an error naming the variable. */
export function readEnumEnv<T extends string>(name: string, allowed: readonly T[], env: NodeJS.ProcessEnv = process.env): T | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const v = raw.trim().toLowerCase();
  if (!(allowed as readonly string[]).includes(v)) {
    throw new InvalidArgumentError(name, `environment variable must be one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`);
  }
  return v as T;
}
