/** A command-line mistake: the CLI prints the message and exits with code 2. */
export class UsageError extends Error {
  constructor(option: string, reason: string) {
    super(`${option}: ${reason}`);
    this.name = 'UsageError';
  }
}

export function parseNumberOption(option: string, raw: string, min: number): number {
  const v = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(v)) throw new UsageError(option, `expected a number, got ${JSON.stringify(raw)}`);
  if (v < min) throw new UsageError(option, `must be >= ${min}, got ${raw}`);
  return v;
}

export function parseIntOption(option: string, raw: string, min: number, max: number): number {
  const v = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(v)) throw new UsageError(option, `expected an integer, got ${JSON.stringify(raw)}`);
  if (v < min || v > max) throw new UsageError(option, `must be between ${min} and ${max}, got ${raw}`);
  return v;
}

export function parseChoice<T extends string>(option: string, raw: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(raw)) throw new UsageError(option, `expected one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as T;
}
