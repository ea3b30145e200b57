/**
 * What every study shares: its command line (commander, as the bench app's), integer options,
 * and the bench app's checker, machine info, writer and merge.
 */
import { spawn } from 'node:child_process';
import { Command, CommanderError, InvalidArgumentError } from 'commander';

export { checkResult, machineInfo, mergeRows, writeTextFile, type Reference } from '@kernelkit/bench';

/**
 * Parses `process.argv` for a study's command: on a mistake prints it with the usage and exits
 * with code 2; `--help` exits with 0.
 */
export function parseStudyArgs<T>(program: Command, argv: readonly string[] = process.argv.slice(2)): T {
  program.exitOverride().showHelpAfterError('(run with --help for usage)');
  try {
    program.parse(argv as string[], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.code === 'commander.helpDisplayed' || err.code === 'commander.help' ? 0 : 2);
    throw err;
  }
  return program.opts<T & Record<string, unknown>>();
}

/** A commander argument parser for an integer of at least `min`. */
export const integer =
  (min = 1) =>
  (raw: string): number => {
    if (!/^-?\d+$/.test(raw) || Number(raw) < min) throw new InvalidArgumentError(`expected an integer >= ${min}, got ${raw}`);
    return Number(raw);
  };

/** A commander argument parser for a comma-separated list of integers of at least `min`. */
export const integers =
  (min = 1) =>
  (raw: string): number[] =>
    raw.split(',').map((s) => integer(min)(s.trim()));

/** A commander argument parser for a positive number. */
export const positive = (raw: string): number => {
  const v = Number(raw);
  if (!(v > 0)) throw new InvalidArgumentError(`expected a positive number, got ${raw}`);
  return v;
};

/** A commander argument parser for one of `allowed`. */
export const oneOf =
  <T extends string>(allowed: readonly T[]) =>
  (raw: string): T => {
    if (!(allowed as readonly string[]).includes(raw)) throw new InvalidArgumentError(`expected one of ${allowed.join(', ')}, got ${raw}`);
    return raw as T;
  };

/** A commander argument parser for a comma-separated list of `allowed` names. */
export const someOf =
  <T extends string>(allowed: readonly T[]) =>
  (raw: string): T[] =>
    raw.split(',').map((s) => oneOf(allowed)(s.trim()));

export { Command };

/** Runs `node ARGS` (a study's own file and its options, say) and resolves with its stdout; stderr passes through. */
export function runNode(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`node ${args.join(' ')} exited with ${code}`))));
  });
}
