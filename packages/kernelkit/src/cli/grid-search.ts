import { access } from 'node:fs/promises';
import { CS610_DISP_PATH, CS610_GRID_PATH, formatCs610Results, readCs610Problem, type BackendName, type Progress } from '@kernelkit/ops';
import { createKernels } from '../kernels.js';
import { ADAPTER_KINDS, BACKEND_NAMES, type AdapterKind } from '../names.js';
import { STDOUT, UsageError, checkOutputPaths, optionalTarget, parseChoice, parseIntOption, parseNumberOption, stderrIsTerminal, writeTarget } from '../cli-kit.js';
import { errorMessage } from '@kernelkit/core';

export interface GridSearchCliOptions {
  readonly grid?: string;
  readonly disp?: string;
  readonly kk?: string;
  readonly out?: string;
  readonly backend?: string;
  readonly variant?: string;
  readonly adapter?: string;
  readonly threads?: string;
  readonly json?: boolean | string;
  readonly progress?: boolean;
}

async function checkReadable(option: string, path: string): Promise<void> {
  try {
    await access(path);
  } catch {
    throw new UsageError(option, `cannot read ${path}`);
  }
}

/** A write that fails after the checks (disk full, a file system that refuses it) still names the path. */
async function writeOutput(option: string, target: string, text: string): Promise<void> {
  try {
    await writeTarget(target, text);
  } catch (err) {
    throw new Error(`${option}: cannot write ${target}: ${errorMessage(err)}`, { cause: err });
  }
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** A one-line progress display with elapsed time and ETA, on a terminal only (piped stderr stays clean). */
function progressWriter(enabled: boolean): ((p: Progress) => void) | undefined {
  if (!enabled || !stderrIsTerminal()) return undefined;
  const t0 = performance.now();
  let last = 0;
  return (p) => {
    const t = performance.now();
    if (t - last < 100 && p.done < p.total) return;
    last = t;
    const pct = p.total > 0 ? ((100 * p.done) / p.total).toFixed(1) : '?';
    const eta = p.done > 0 && p.total > 0 ? seconds(((t - t0) * (p.total - p.done)) / p.done) : '?';
    process.stderr.write(`\rgrid search: ${pct}% (${p.done.toExponential(2)} / ${p.total.toExponential(2)} ${p.unit}), elapsed ${seconds(t - t0)}, ETA ${eta}  `);
  };
}

export async function gridSearchCommand(o: GridSearchCliOptions): Promise<void> {
  const grid = o.grid ?? CS610_GRID_PATH;
  const disp = o.disp ?? CS610_DISP_PATH;
  const out = o.out ?? 'results.txt';
  const kk = o.kk === undefined ? 0.3 : parseNumberOption('--kk', o.kk, 0);
  const backend = o.backend === undefined ? undefined : parseChoice<BackendName>('--backend', o.backend, BACKEND_NAMES);
  const adapter = o.adapter === undefined ? undefined : parseChoice<AdapterKind>('--adapter', o.adapter, ADAPTER_KINDS);
  const threads = o.threads === undefined ? undefined : parseIntOption('--threads', o.threads, 1, 1024);
  if (o.variant !== undefined && o.variant.trim() === '') throw new UsageError('--variant', 'must not be empty');
  const jsonTarget = optionalTarget(o.json);
  if (out === STDOUT && jsonTarget === STDOUT) throw new UsageError('--json', `the results go to stdout (--out ${STDOUT}); give the summary a file`);
  await checkReadable('--grid', grid);
  await checkReadable('--disp', disp);
  // Before the search, which can take minutes: a bad output path should cost nothing.
  await checkOutputPaths(
    [{ option: '--out', path: out }, ...(jsonTarget === undefined ? [] : [{ option: '--json', path: jsonTarget }])],
    [{ option: '--grid', path: grid }, { option: '--disp', path: disp }],
  );
  const args = await readCs610Problem(grid, disp, kk);

  const kernels = await createKernels({
    ...(backend === undefined ? {} : { backend }),
    ...(adapter === undefined ? {} : { adapter }),
    ...(threads === undefined ? {} : { threads }),
  });
  try {
    const variants = kernels.variants('gridSearch');
    if (o.variant !== undefined && !variants.includes(o.variant)) {
      throw new UsageError('--variant', `the ${kernels.selected} backend has no grid-search variant ${JSON.stringify(o.variant)} (it has: ${variants.join(', ')})`);
    }
    const onProgress = progressWriter(o.progress !== false);
    const t0 = performance.now();
    const r = await kernels.gridSearch(args, {
      timing: true,
      ...(o.variant === undefined ? {} : { variant: o.variant }),
      ...(onProgress === undefined ? {} : { onProgress }),
    });
    const ms = performance.now() - t0;
    if (onProgress) process.stderr.write('\n');
    await writeOutput('--out', out, formatCs610Results(r.data));
    const summary = { count: r.data.count, ms, kernelMs: r.timing?.kernelMs, backend: r.backend, variant: r.variant, out, skipped: kernels.skipped, notes: r.notes ?? [] };
    if (jsonTarget !== undefined) await writeOutput('--json', jsonTarget, JSON.stringify(summary, null, 2) + '\n');
    if (jsonTarget !== STDOUT) {
      // With the results on stdout, the summary goes to stderr so the two never mix.
      const say = (line: string): boolean => (out === STDOUT ? process.stderr : process.stdout).write(line);
      say(`${r.data.count} points in ${(ms / 1000).toFixed(3)} s on ${r.backend} (${r.variant}); results in ${out === STDOUT ? 'stdout' : out}\n`);
      for (const note of r.notes ?? []) say(`  note: ${note}\n`);
      for (const s of kernels.skipped) say(`  skipped ${s.backend}: ${s.reason}\n`);
    }
  } finally {
    await kernels.dispose();
  }
}
