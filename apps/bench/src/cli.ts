#!/usr/bin/env node
// Only cli-kit is imported up front: the relaunching parent process needs nothing else.
import { STDOUT, relaunchWithQuietNativeWarnings, runCli, stderrIsTerminal, syncStderr, terminalStderr } from 'kernelkit/cli-kit';
import type { Row } from './types.js';

const PROG = 'kernelkit-bench';

function rowLine(r: Row): string {
  const what = `${r.op} ${r.caseId} ${r.backend}/${r.variant}`;
  if (r.status === 'ok') return `${what}: median ${r.stats.medianMs.toFixed(3)} ms (${r.stats.samples} samples)`;
  return `${what}: ${r.status}: ${r.status === 'errored' ? r.message : r.reason}`;
}

async function main(): Promise<number> {
  const [{ default: cliProgress }, { parseBenchArgs }, { formatTable }, { writeOutputs }, { runBench }, { CHILD_ENV, ONE_PROCESS_PER_BACKEND, runIsolated }] = await Promise.all([
    import('cli-progress'),
    import('./args.js'),
    import('./output/table.js'),
    import('./output/write.js'),
    import('./run.js'),
    import('./isolate.js'),
  ]);
  const o = parseBenchArgs(process.argv.slice(2), stderrIsTerminal());
  // A child of an isolated run (isolate.ts) reports its plan and rows to the parent over IPC.
  const referenceDir = process.env[CHILD_ENV];
  const send = referenceDir !== undefined && process.send ? process.send.bind(process) : undefined;
  if (send) {
    process.channel?.unref();
    // The parent's death ends the child: nobody is left to read its rows.
    process.on('disconnect', () => process.exit(1));
  }
  // A report on stdout keeps stdout for itself: the table then goes to stderr with the logs.
  const reportOnStdout = o.json === STDOUT || o.md === STDOUT;
  // One tick per result row, on stderr and only on a terminal.
  const bar = o.progress
    ? new cliProgress.SingleBar(
        { stream: terminalStderr(), format: '{bar} {value}/{total} rows | elapsed {duration_formatted} | ETA {eta_formatted} | {row}', hideCursor: true, etaBuffer: 20 },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  const partialTargets = { ...(o.json && o.json !== STDOUT ? { json: o.json } : {}), ...(o.md && o.md !== STDOUT ? { md: o.md } : {}) };
  let started = false;
  const hooks = {
    onTotal: (n: number) => {
      if (send) send({ kind: 'total', total: n });
      else if (started) bar?.setTotal(n);
      else bar?.start(n, 0, { row: '' });
      started = true;
    },
    onRow: (row: Row) => {
      if (send) send({ kind: 'row', row });
      else if (bar) bar.increment(1, { row: `${row.op} ${row.caseId} ${row.backend}/${row.variant}` });
      // Without a bar, each row goes to stderr as it lands: a run killed by a timeout keeps them.
      else process.stderr.write(`${rowLine(row)}\n`);
    },
    // The files exist (marked partial) from the first row on, so a killed run keeps its rows.
    // Only --json/--md files: the --out file name depends on the adapter, unknown before WebGPU opens.
    onPartial: async (partial: import('./types.js').BenchReport) => {
      await writeOutputs(partial, partialTargets, false);
    },
  };
  let report;
  try {
    if (o.inProcess || (o.backends.length === 1 && o.rounds === undefined)) {
      const isolation = send ? ONE_PROCESS_PER_BACKEND : o.inProcess ? undefined : 'one backend, run in the bench process itself';
      report = await runBench(o, { ...hooks, ...(send ? { referenceDir: referenceDir!, parentChecksVariants: true } : {}), ...(isolation ? { isolation } : {}) });
    } else {
      // The children's stderr would tear a progress bar: it is quoted only when a child dies.
      report = await runIsolated(o, process.argv[1]!, { ...hooks, relayStderr: !bar });
    }
  } finally {
    bar?.stop();
  }
  // The bar's last line (relayed on stderr) must be out before the table lands on stdout.
  await syncStderr();
  // A child's report goes to its parent through the --json file alone.
  if (send) return (await writeOutputs(report, o), 0);
  (reportOnStdout ? process.stderr : process.stdout).write(formatTable(report));
  for (const f of await writeOutputs(report, o)) process.stderr.write(`wrote ${f}\n`);
  return 0;
}

const relaunched = await relaunchWithQuietNativeWarnings();
if (relaunched !== undefined) process.exitCode = relaunched;
else await runCli(PROG, main);
