/**
 * What every kernelkit command-line program shares (the `kernelkit`, bench and Fashion-MNIST
 * CLIs): one commander setup, one error printer and exit-code contract, `-` for stdout, and a
 * stderr filter that keeps Dawn's native warnings off the terminal.
 *
 * Exit codes: 0 success (help and --version included), 1 a failure while running, 2 a usage error.
 */
import { spawn } from 'node:child_process';
import { constants as fsConstants, readFileSync, type Stats } from 'node:fs';
import { access, realpath, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CommanderError, InvalidArgumentError as CommanderArgumentError, type Command } from 'commander';
import { InvalidArgumentError, errorMessage } from '@kernelkit/core';

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A command-line mistake: printed as `<prog>: <option>: <reason>` with a --help hint, exit code 2. */
export class UsageError extends Error {
  constructor(option: string, reason: string) {
    super(`${option}: ${reason}`);
    this.name = 'UsageError';
  }
}

/** Decimal only: Number() also takes `0x10`, `0b1`, `0o7` and `Infinity`, which an option value should not silently become. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export function parseNumberOption(option: string, raw: string, min: number): number {
  const v = Number(raw);
  if (!DECIMAL.test(raw.trim()) || !Number.isFinite(v)) throw new UsageError(option, `expected a decimal number, got ${JSON.stringify(raw)}`);
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

/** KERNELKIT_DEBUG=1 (everything) or a comma-separated list of topics, e.g. KERNELKIT_DEBUG=webgpu. */
export function isDebug(topic?: string): boolean {
  const v = process.env['KERNELKIT_DEBUG']?.trim() ?? '';
  if (v === '' || v === '0') return false;
  if (topic === undefined) return true;
  const topics = v.split(',').map((s) => s.trim());
  return topics.includes(topic) || topics.includes('1') || topics.includes('all');
}

/** The version in the package.json nearest above `moduleUrl` (pass `import.meta.url`). */
export function packageVersion(moduleUrl: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string };
      if (typeof pkg.version === 'string') return pkg.version;
    } catch {
      // No package.json here: keep walking up.
    }
    const up = dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}

/**
 * The one commander setup: `--version`, errors printed as `<prog>: <message>` plus a --help
 * hint, and exceptions instead of process.exit so runCli picks the exit code. Call it before
 * adding subcommands: commander copies these settings into each one as it is created.
 */
export function configureProgram(program: Command, version: string): Command {
  const name = program.name();
  return program
    .version(version, '--version', 'print the version and exit')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`${name}: ${text.replace(/^error: /, '')}`) })
    .showHelpAfterError(`Try '${name} --help'.`);
}

/** Prints `err` the shared way and returns the exit code for it. */
export function reportError(prog: string, err: unknown): number {
  // Commander printed its own message (or the help / version asked for) before throwing. Its
  // InvalidArgumentError only arrives here when a CLI throws it after parsing, unprinted.
  if (err instanceof CommanderError && !(err instanceof CommanderArgumentError)) return err.exitCode === 0 ? 0 : EXIT_USAGE;
  const message = errorMessage(err);
  if (err instanceof UsageError || err instanceof InvalidArgumentError || err instanceof CommanderArgumentError) {
    process.stderr.write(`${prog}: ${message}\nTry '${prog} --help'.\n`);
    return EXIT_USAGE;
  }
  process.stderr.write(`${prog}: ${message.split('\n').join(' ')}\n`);
  if (isDebug() && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  return EXIT_FAILURE;
}

/** Runs a CLI's main and sets the process exit code from its result or its error. */
export async function runCli(prog: string, main: () => Promise<number | void>): Promise<void> {
  try {
    const code = await main();
    process.exitCode = code ?? process.exitCode ?? 0;
  } catch (err) {
    process.exitCode = reportError(prog, err);
  }
}

/** `-` names stdout in every --json/--md option. */
export const STDOUT = '-';

/** An `--json [file]` option's target: the file, stdout for `-` or no value, undefined when absent. */
export function optionalTarget(value: boolean | string | undefined): string | undefined {
  return typeof value === 'string' ? value : value === true ? STDOUT : undefined;
}

/** A path given on the command line and the option that named it. */
export interface PathOption {
  readonly option: string;
  readonly path: string;
}

const reason = (err: unknown): string => (err instanceof Error && 'code' in err ? String(err.code) : errorMessage(err));

/** What makes two paths the same file: device and inode when it exists, else its path with the folder's links resolved. */
async function fileIdentity(path: string, st: Stats | undefined): Promise<string> {
  if (st !== undefined) return `${st.dev}:${st.ino}`;
  const abs = resolve(path);
  try {
    return join(await realpath(dirname(abs)), basename(abs));
  } catch {
    return abs;
  }
}

/**
 * Checks every output a command will write before it does any work, so a bad path costs nothing:
 * its folder exists and takes new files, it is not a folder, an existing file is writable, and it
 * is not one of the inputs or another output (links resolved). `-` (stdout) is skipped. Throws
 * UsageError naming the option and the path.
 */
export async function checkOutputPaths(outputs: readonly PathOption[], inputs: readonly PathOption[] = []): Promise<void> {
  const seen: { option: string; path: string; id: string }[] = [];
  for (const { option, path } of inputs) {
    const st = await stat(path).catch(() => undefined);
    if (st !== undefined) seen.push({ option, path, id: await fileIdentity(path, st) });
  }
  const inputCount = seen.length;
  for (const { option, path } of outputs) {
    if (path === STDOUT) continue;
    if (path === '') throw new UsageError(option, 'expected a file name, got an empty string');
    let st: Stats | undefined;
    try {
      st = await stat(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new UsageError(option, `cannot write ${path} (${reason(err)})`);
    }
    if (st?.isDirectory()) throw new UsageError(option, `${path} is a folder; expected a file to write`);
    if (st !== undefined) {
      await access(path, fsConstants.W_OK).catch((err: unknown) => {
        throw new UsageError(option, `${path} is not writable (${reason(err)})`);
      });
    } else {
      const folder = dirname(resolve(path));
      const fst = await stat(folder).catch(() => undefined);
      if (fst === undefined || !fst.isDirectory()) throw new UsageError(option, `cannot create ${path}: the folder ${folder} does not exist`);
      await access(folder, fsConstants.W_OK | fsConstants.X_OK).catch((err: unknown) => {
        throw new UsageError(option, `cannot create ${path}: the folder ${folder} is not writable (${reason(err)})`);
      });
    }
    const id = await fileIdentity(path, st);
    const same = seen.find((s) => s.id === id);
    if (same !== undefined) {
      const what = seen.indexOf(same) < inputCount ? 'an input: refusing to overwrite it' : 'another output';
      throw new UsageError(option, `${path} is the same file as ${same.option} ${same.path}, ${what}`);
    }
    seen.push({ option, path, id });
  }
}

/** Writes `text` to the file `target`, or to stdout when it is `-`. */
export async function writeTarget(target: string, text: string): Promise<void> {
  if (target === STDOUT) process.stdout.write(text);
  else await writeFile(target, text);
}

// ---------------------------------------------------------------------------------------------
// Dawn's native warnings. dawn.node prints them with fprintf(stderr) from native code (at adapter
// and instance creation: "Couldn't load Vulkan…", "…artificially reduced…"); no JS callback or
// toggle reaches them, and Node cannot redirect fd 2 of its own process. So on a terminal a CLI
// relaunches itself once with stderr piped through a filter that drops them (KERNELKIT_DEBUG
// keeps them). Piped or redirected stderr is left alone unless KERNELKIT_STDERR_FILTER=1: there the
// warnings cannot garble a progress bar, and a parent killed by a harness (SIGKILL) could leave
// a busy child running until its work ends.

const CHILD_ENV = 'KERNELKIT_STDERR_FILTERED';
const COLUMNS_ENV = 'KERNELKIT_STDERR_COLUMNS';
const WARNING = 'Warning: ';
/** Written by the child to stderr; the parent answers over IPC once everything before it is out. */
const SYNC_MARK = '\u001bkernelkit-stderr-sync\u0007';
const SYNCED = 'kernelkit-stderr-synced';
const STACK = '    at ';

/**
 * A line filter for text arriving in arbitrary chunks: drops Dawn's log messages (a line
 * starting `Warning: `, its `    at …` source lines and the blank line after) and passes the
 * rest through as soon as it is known not to be one, partial lines (progress bars) included.
 */
export function nativeWarningFilter(write: (text: string) => void): { push(chunk: string): void; flush(): void } {
  let buffer = '';
  let atLineStart = true;
  let mode: 'pass' | 'dropLine' | 'afterMessage' = 'pass';
  const drain = (final: boolean): void => {
    while (buffer.length > 0) {
      if (mode === 'dropLine') {
        const nl = buffer.indexOf('\n');
        if (nl < 0) {
          buffer = '';
          return;
        }
        buffer = buffer.slice(nl + 1);
        mode = 'afterMessage';
        atLineStart = true;
        continue;
      }
      if (mode === 'afterMessage') {
        if (buffer.startsWith(STACK)) mode = 'dropLine';
        else if (buffer.startsWith('\n')) {
          buffer = buffer.slice(1);
          mode = 'pass';
        } else if (!final && STACK.startsWith(buffer)) return;
        else mode = 'pass';
        continue;
      }
      if (atLineStart) {
        if (buffer.startsWith(WARNING)) {
          mode = 'dropLine';
          continue;
        }
        if (!final && WARNING.startsWith(buffer)) return;
      }
      const end = buffer.search(/[\n\r]/);
      if (end < 0) {
        write(buffer);
        buffer = '';
        atLineStart = false;
        return;
      }
      write(buffer.slice(0, end + 1));
      buffer = buffer.slice(end + 1);
      atLineStart = true;
    }
  };
  return {
    push(chunk) {
      buffer += chunk;
      drain(false);
    },
    flush() {
      drain(true);
    },
  };
}

/**
 * Call first thing in a CLI. When stderr is a terminal it runs this same script again with
 * stderr filtered and resolves to the child's exit code: the caller exits with it. In the
 * child, with stderr piped, or when KERNELKIT_DEBUG asks for WebGPU output, it resolves
 * undefined and the caller just runs.
 */
export async function relaunchWithQuietNativeWarnings(): Promise<number | undefined> {
  if (process.env[CHILD_ENV] === '1') {
    // The parent's death (even SIGKILL) ends this process too: its IPC channel closes, and as a
    // fallback (a channel close is not always seen while rows run) this process is re-parented.
    if (process.channel) {
      process.channel.unref();
      process.on('disconnect', () => process.exit(EXIT_FAILURE));
    }
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) process.exit(EXIT_FAILURE);
    }, 500).unref();
    return undefined;
  }
  if (isDebug('webgpu') || !(process.stderr.isTTY || process.env['KERNELKIT_STDERR_FILTER'] === '1')) return undefined;
  const script = process.argv[1];
  if (script === undefined) return undefined;
  const env: NodeJS.ProcessEnv = { ...process.env, [CHILD_ENV]: '1' };
  if (process.stderr.isTTY) env[COLUMNS_ENV] = String(process.stderr.columns || 80);
  const child = spawn(process.execPath, [...process.execArgv, script, ...process.argv.slice(2)], { stdio: ['inherit', 'inherit', 'pipe', 'ipc'], env });
  const filter = nativeWarningFilter((text) => process.stderr.write(text));
  let idle: NodeJS.Timeout | undefined;
  let pending = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    for (let i = pending.indexOf(SYNC_MARK); i >= 0; i = pending.indexOf(SYNC_MARK)) {
      filter.push(pending.slice(0, i));
      filter.flush();
      pending = pending.slice(i + SYNC_MARK.length);
      if (child.connected) child.send(SYNCED);
    }
    // A mark split across chunks: hold its start back until the rest arrives.
    let keep = Math.min(pending.length, SYNC_MARK.length - 1);
    while (keep > 0 && !SYNC_MARK.startsWith(pending.slice(pending.length - keep))) keep--;
    filter.push(pending.slice(0, pending.length - keep));
    pending = pending.slice(pending.length - keep);
    // Text held back as a possible warning start is released once nothing follows it for a moment.
    clearTimeout(idle);
    idle = setTimeout(() => filter.flush(), 50);
  });
  // Ctrl-C reaches the whole process group: the child handles it, this process waits for its exit.
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  process.on('SIGINT', () => {});
  process.on('SIGTERM', forward('SIGTERM'));
  process.on('SIGHUP', forward('SIGHUP'));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(idle);
      filter.flush();
      resolve(code ?? (signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : EXIT_FAILURE));
    });
  });
}

/**
 * Resolves once everything written to stderr so far has reached the user's stderr. Stdout goes
 * straight to the terminal but stderr through the relaunching parent, so call this before
 * writing stdout after stderr output that must come first (a progress bar's last line).
 */
export async function syncStderr(): Promise<void> {
  const channel = process.channel;
  if (process.env[CHILD_ENV] !== '1' || channel === undefined || !process.connected) return;
  channel.ref();
  try {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        process.off('message', onMessage);
        resolve();
      };
      const onMessage = (m: unknown): void => {
        if (m === SYNCED) done();
      };
      // The parent answers at once; the limit only keeps a broken channel from hanging the CLI.
      const timer = setTimeout(done, 2000);
      process.on('message', onMessage);
      process.stderr.write(SYNC_MARK);
    });
  } finally {
    channel.unref();
  }
}

/** Whether progress output reaches a terminal (also in the filtered child, whose stderr is a pipe). */
export function stderrIsTerminal(): boolean {
  return process.stderr.isTTY === true || process.env[COLUMNS_ENV] !== undefined;
}

/** A stream for progress bars: stderr, presented as the terminal it ends up on. */
export function terminalStderr(): NodeJS.WriteStream {
  if (process.stderr.isTTY || process.env[COLUMNS_ENV] === undefined) return process.stderr;
  const columns = Number(process.env[COLUMNS_ENV]) || 80;
  return Object.assign(Object.create(process.stderr) as NodeJS.WriteStream, { isTTY: true, columns, write: process.stderr.write.bind(process.stderr) });
}
