import { Command } from 'commander';
import { OP_NAMES, type OpName } from '@kernelkit/ops';
import { BENCH_BACKENDS, type BenchBackend } from './backends.js';
import { PEER_NAMES } from './peers/index.js';
import { STDOUT, UsageError, configureProgram, packageVersion, parseIntOption } from 'kernelkit/cli-kit';
import { benchCases } from './cases.js';
import { WORKLOAD_NAMES, type BenchOptions, type WorkloadName } from './types.js';

export { UsageError };

/** The program name in usage and error messages (cli.ts prints errors under the same name). */
export const PROG = 'kernelkit-bench';

const list = (raw: string | undefined): string[] | undefined => (raw === undefined ? undefined : raw.split(',').map((s) => s.trim()).filter(Boolean));

function choices<T extends string>(option: string, raw: string | undefined, allowed: readonly T[]): T[] | undefined {
  const xs = list(raw);
  if (xs === undefined) return undefined;
  if (!xs.length) throw new UsageError(option, 'must not be empty');
  for (const x of xs) if (!(allowed as readonly string[]).includes(x)) throw new UsageError(option, `expected one or more of ${allowed.join(', ')} (comma-separated), got ${JSON.stringify(x)}`);
  return xs as T[];
}

export function buildProgram(): Command {
  return configureProgram(new Command(PROG), packageVersion(import.meta.url))
    .description('every op × backend × variant on named workloads (tinybench)')
    .option('--workload <name>', `${WORKLOAD_NAMES.join('|')} (small: CI sizes; seed: the course reports' sizes; tiny: smoke-test sizes)`, 'small')
    .option('--op <ops>', `comma-separated: ${OP_NAMES.join(', ')}`)
    .option('--backend <names>', `comma-separated: ${BENCH_BACKENDS.join(', ')} (kernelkit: the facade routing each call; ${PEER_NAMES.join(', ')}: peer libraries, for comparison on conv2d and convLayer)`)
    .option('--variant <names>', 'comma-separated variant names')
    .option('--case <ids>', 'comma-separated workload ids (e.g. scan-4M-u32)')
    .option('--threads <n>', 'Piscina worker count')
    .option('--json <file>', `write raw stats and machine info as JSON ('${STDOUT}': stdout, the table then goes to stderr)`)
    .option('--md <file>', `write the markdown report ('${STDOUT}': stdout, the table then goes to stderr)`)
    .option('--svg <dir>', 'write one SVG chart per op')
    .option('--out <dir>', 'write <machine>-<date>.json/.md and per-op SVGs')
    .option('--no-progress', 'no progress bar even on a terminal')
    .option('--no-floor', "skip the memory floor and compute ceiling probes (copy and fresh-output write speeds, the tables' \"vs floor\" column; the threads' multiply-add speed-up)")
    .option('--in-process', 'run every backend in this process instead of one child process per backend (a WebGPU or WebAssembly row then slows the JavaScript rows after it)')
    .option('--no-side-by-side', "skip timing the router's rows again beside the backends it weighed, in turns of back-to-back calls in its own process")
    .option('--rounds <n>', 'run each backend in n child processes, round-robin (every backend once, then again), and keep for each row the round with the median median; the report lists every round\'s median (a machine whose speed drifts, or a process that starts slow, then shows as spread instead of moving one row)', '1');
}

/** Unknown case ids, and --op/--case filters that leave no case, are usage errors. */
function checkCases(workload: WorkloadName, ops: readonly OpName[], cases: readonly string[] | undefined): void {
  const all = benchCases(workload);
  const known = all.map((c) => c.id);
  const unknown = (cases ?? []).filter((c) => !known.includes(c));
  if (unknown.length) throw new UsageError('--case', `unknown case ${unknown.join(', ')} in the ${workload} workload (it has: ${known.join(', ')})`);
  const picked = all.filter((c) => ops.includes(c.op) && (cases === undefined || cases.includes(c.id)));
  if (!picked.length) {
    const ofOps = all.filter((c) => ops.includes(c.op)).map((c) => c.id);
    throw new UsageError('--case', `none of ${cases!.join(', ')} is a case of --op ${ops.join(',')} (those are: ${ofOps.join(', ')})`);
  }
}

export function parseBenchArgs(argv: readonly string[], isTty: boolean): BenchOptions {
  const program = buildProgram();
  program.parse(argv as string[], { from: 'user' });
  const o = program.opts<Record<string, string | boolean | undefined>>();
  const s = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
  const workload = choices<WorkloadName>('--workload', s('workload'), WORKLOAD_NAMES)?.[0] ?? 'small';
  const ops = choices<OpName>('--op', s('op'), OP_NAMES) ?? [...OP_NAMES];
  const backends = choices<BenchBackend>('--backend', s('backend'), BENCH_BACKENDS) ?? [...BENCH_BACKENDS];
  const t = s('threads');
  const threads = t === undefined ? undefined : parseIntOption('--threads', t, 1, 1024);
  const rounds = parseIntOption('--rounds', s('rounds') ?? '1', 1, 99);
  if (rounds > 1 && o['inProcess'] === true) throw new UsageError('--rounds', 'needs one child process per backend; it cannot be used with --in-process');
  const variants = list(s('variant'));
  const cases = list(s('case'));
  if (variants?.length === 0) throw new UsageError('--variant', 'must not be empty');
  if (cases?.length === 0) throw new UsageError('--case', 'must not be empty');
  checkCases(workload, ops, cases);
  if (s('json') === STDOUT && s('md') === STDOUT) throw new UsageError('--md', `--json and --md cannot both write to stdout ('${STDOUT}')`);
  const opt = <K extends string, V>(k: K, v: V | undefined): { [P in K]?: V } => (v === undefined ? {} : ({ [k]: v } as { [P in K]?: V }));
  return {
    workload,
    ops,
    backends,
    ...opt('variants', variants),
    ...opt('cases', cases),
    ...opt('threads', threads),
    ...opt('json', s('json')),
    ...opt('md', s('md')),
    ...opt('svg', s('svg')),
    ...opt('out', s('out')),
    progress: isTty && o['progress'] !== false,
    inProcess: o['inProcess'] === true,
    floor: o['floor'] !== false,
    ...(o['sideBySide'] === false ? { sideBySide: false } : {}),
    ...(rounds > 1 ? { rounds } : {}),
  };
}
