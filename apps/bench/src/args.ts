import { Command } from 'commander';
import { OP_NAMES, type BackendName, type OpName } from '@kernelkit/ops';
import { BACKEND_NAMES } from 'kernelkit';
import { WORKLOAD_NAMES, type BenchOptions, type WorkloadName } from './types.js';

/** A command-line mistake: printed and the process exits with code 2. */
export class UsageError extends Error {
  constructor(option: string, reason: string) {
    super(`${option}: ${reason}`);
    this.name = 'UsageError';
  }
}

const list = (raw: string | undefined): string[] | undefined => (raw === undefined ? undefined : raw.split(',').map((s) => s.trim()).filter(Boolean));

function choices<T extends string>(option: string, raw: string | undefined, allowed: readonly T[]): T[] | undefined {
  const xs = list(raw);
  if (xs === undefined) return undefined;
  if (!xs.length) throw new UsageError(option, 'must not be empty');
  for (const x of xs) if (!(allowed as readonly string[]).includes(x)) throw new UsageError(option, `expected one or more of ${allowed.join(', ')} (comma-separated), got ${JSON.stringify(x)}`);
  return xs as T[];
}

export function buildProgram(): Command {
  return new Command('kernelkit-bench')
    .description('every op × backend × variant on named workloads (tinybench)')
    .option('--workload <name>', `${WORKLOAD_NAMES.join('|')} (tiny: smoke-test sizes)`, 'small')
    .option('--op <ops>', `comma-separated: ${OP_NAMES.join(', ')}`)
    .option('--backend <names>', `comma-separated: ${BACKEND_NAMES.join(', ')}`)
    .option('--variant <names>', 'comma-separated variant names')
    .option('--case <ids>', 'comma-separated workload ids (e.g. scan-4M-u32)')
    .option('--threads <n>', 'Piscina worker count')
    .option('--json <file>', 'write raw stats and machine info as JSON')
    .option('--md <file>', 'write the markdown report')
    .option('--svg <dir>', 'write one SVG chart per op')
    .option('--out <dir>', 'write <machine>-<date>.json/.md and per-op SVGs')
    .option('--no-progress', 'no progress bar even on a TTY')
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');
}

export function parseBenchArgs(argv: readonly string[], isTty: boolean): BenchOptions {
  const program = buildProgram();
  program.parse(argv as string[], { from: 'user' });
  const o = program.opts<Record<string, string | boolean | undefined>>();
  const s = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
  const workload = choices<WorkloadName>('--workload', s('workload'), WORKLOAD_NAMES)?.[0] ?? 'small';
  const ops = choices<OpName>('--op', s('op'), OP_NAMES) ?? [...OP_NAMES];
  const backends = choices<BackendName>('--backend', s('backend'), BACKEND_NAMES) ?? [...BACKEND_NAMES];
  let threads: number | undefined;
  const t = s('threads');
  if (t !== undefined) {
    threads = Number(t);
    if (!/^\d+$/.test(t) || threads < 1 || threads > 1024) throw new UsageError('--threads', `expected an integer from 1 to 1024, got ${JSON.stringify(t)}`);
  }
  const variants = list(s('variant'));
  const cases = list(s('case'));
  if (variants?.length === 0) throw new UsageError('--variant', 'must not be empty');
  if (cases?.length === 0) throw new UsageError('--case', 'must not be empty');
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
  };
}
