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
  const [{ default: cliProgress }, { parseBenchArgs }, { formatTable }, { writeOutputs }, { runBench }] = await Promise.all([
    import('cli-progress'),
    import('./args.js'),
    import('./output/table.js'),
    import('./output/write.js'),
    import('./run.js'),
  ]);
  const o = parseBenchArgs(process.argv.slice(2), stderrIsTerminal());
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
  let report;
  try {
    report = await runBench(o, {
      onTotal: (n) => bar?.start(n, 0, { row: '' }),
      onRow: (row) => {
        if (bar) bar.increment(1, { row: `${row.op} ${row.caseId} ${row.backend}/${row.variant}` });
        // Without a bar, each row goes to stderr as it lands: a run killed by a timeout keeps them.
        else process.stderr.write(`${rowLine(row)}\n`);
      },
      // The files exist (marked partial) from the first row on, so a killed run keeps its rows.
      // Only --json/--md files: the --out file name depends on the adapter, unknown before WebGPU opens.
      onPartial: async (partial) => {
        await writeOutputs(partial, partialTargets, false);
      },
    });
  } finally {
    bar?.stop();
  }
  // The bar's last line (relayed on stderr) must be out before the table lands on stdout.
  await syncStderr();
  (reportOnStdout ? process.stderr : process.stdout).write(formatTable(report));
  for (const f of await writeOutputs(report, o)) process.stderr.write(`wrote ${f}\n`);
  return 0;
}

const relaunched = await relaunchWithQuietNativeWarnings();
if (relaunched !== undefined) process.exitCode = relaunched;
else await runCli(PROG, main);
