#!/usr/bin/env node
import { CommanderError } from 'commander';
import cliProgress from 'cli-progress';
import { benchCases } from './cases.js';
import { UsageError, parseBenchArgs } from './args.js';
import { formatTable } from './output/table.js';
import { writeOutputs } from './output/write.js';
import { runBench } from './run.js';
import type { Row } from './types.js';

function rowLine(r: Row): string {
  const what = `${r.op} ${r.caseId} ${r.backend}/${r.variant}`;
  if (r.status === 'ok') return `${what}: median ${r.stats.medianMs.toFixed(3)} ms (${r.stats.samples} samples)`;
  return `${what}: ${r.status}: ${r.status === 'errored' ? r.message : r.reason}`;
}

async function main(): Promise<number> {
  let o;
  try {
    o = parseBenchArgs(process.argv.slice(2), process.stderr.isTTY === true);
  } catch (err) {
    if (err instanceof CommanderError) return err.code === 'commander.helpDisplayed' || err.code === 'commander.help' ? 0 : 2;
    if (err instanceof UsageError) {
      process.stderr.write(`kernelkit-bench: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (o.cases) {
    const known = benchCases(o.workload).map((c) => c.id);
    const bad = o.cases.filter((c) => !known.includes(c));
    if (bad.length) {
      process.stderr.write(`kernelkit-bench: --case: unknown workload id ${bad.join(', ')} in the ${o.workload} workload (known: ${known.join(', ')})\n`);
      return 2;
    }
  }
  // The bar goes to stderr and only on a TTY, so piped stdout (the table) stays clean.
  const bar = o.progress ? new cliProgress.SingleBar({ stream: process.stderr, format: '{bar} {value}/{total} {step}', hideCursor: true }, cliProgress.Presets.shades_classic) : undefined;
  const report = await runBench(o, {
    onTotal: (n) => bar?.start(n, 0, { step: '' }),
    onStep: (step) => bar?.increment(1, { step }),
    // Without a bar, log each row to stderr as it lands: a run killed by a timeout keeps them.
    onRow: (row) => {
      if (!bar) process.stderr.write(`${rowLine(row)}\n`);
    },
    // The files exist (marked partial) from the first row on, so a killed run keeps its rows.
    // Only --json/--md: the --out file name depends on the adapter, unknown before WebGPU opens.
    onPartial: async (partial) => {
      await writeOutputs(partial, { ...(o.json ? { json: o.json } : {}), ...(o.md ? { md: o.md } : {}) }, false);
    },
  });
  bar?.stop();
  process.stdout.write(formatTable(report));
  for (const f of await writeOutputs(report, o)) process.stderr.write(`wrote ${f}\n`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`kernelkit-bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
