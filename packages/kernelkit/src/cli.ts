#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { InvalidArgumentError, KernelkitError } from '@kernelkit/core';
import { runDoctor } from './doctor.js';
import { formatDoctor } from './doctor-format.js';
import { gridSearchCommand, type GridSearchCliOptions } from './cli/grid-search.js';
import { UsageError, parseChoice, parseIntOption } from './cli/usage-error.js';
import { ADAPTER_KINDS, type AdapterKind } from './names.js';

const EXIT_USAGE = 2;

const program = new Command('kernelkit')
  .description('kernelkit: parallel numeric kernels; picks the best backend that works and says why')
  // Commander exits 1 on its own parse errors; the CLI's contract is 2 for every argument error.
  .exitOverride()
  .showHelpAfterError('(run with --help for usage)');

program
  .command('doctor')
  .description("every backend's availability and the reason, the WebGPU adapter, gpu.js modes, and what auto-selection picks")
  .option('--json', 'print the report as JSON')
  .option('--threads <n>', 'Piscina worker count')
  .option('--adapter <kind>', `WebGPU adapter kind (${ADAPTER_KINDS.join('|')})`)
  .action(async (o: { json?: boolean; threads?: string; adapter?: string }) => {
    const threads = o.threads === undefined ? undefined : parseIntOption('--threads', o.threads, 1, 1024);
    const adapter = o.adapter === undefined ? undefined : parseChoice<AdapterKind>('--adapter', o.adapter, ADAPTER_KINDS);
    const report = await runDoctor({ ...(threads === undefined ? {} : { threads }), ...(adapter === undefined ? {} : { adapter }) });
    process.stdout.write(o.json ? JSON.stringify(report, null, 2) + '\n' : formatDoctor(report));
  });

program
  .command('grid-search')
  .description('the CS610 constrained grid search on the best backend; writes the CS610 results file')
  .option('--grid <file>', 'grid.txt (default: the CS610 file shipped in @kernelkit/ops)')
  .option('--disp <file>', 'disp.txt (default: the CS610 file shipped in @kernelkit/ops)')
  .option('--kk <number>', 'tolerance multiplier (e = kk·ey)', undefined)
  .option('--out <file>', 'results file', 'results.txt')
  .option('--backend <name>', 'force a backend (webgpu|piscina|cpu|gpujs)')
  .option('--variant <name>', 'grid-search variant of that backend')
  .option('--adapter <kind>', `WebGPU adapter kind (${ADAPTER_KINDS.join('|')})`)
  .option('--threads <n>', 'Piscina worker count')
  .option('--json', 'print the summary as JSON')
  .action((o: GridSearchCliOptions) => gridSearchCommand(o));

function fail(code: number, msg: string): void {
  process.stderr.write(`kernelkit: ${msg}\n`);
  process.exitCode = code;
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // Commander already printed its message; asked-for help and --version are successes, help
    // shown because no command was given is a usage error.
    process.exitCode = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? 0 : EXIT_USAGE;
  } else if (err instanceof UsageError || err instanceof InvalidArgumentError) {
    fail(EXIT_USAGE, err.message);
  } else if (err instanceof KernelkitError) {
    fail(1, err.message);
  } else {
    fail(1, err instanceof Error ? (err.stack ?? err.message) : String(err));
  }
}
