#!/usr/bin/env node
import { Command } from 'commander';
import { runDoctor } from './doctor.js';
import { formatDoctor } from './doctor-format.js';
import { gridSearchCommand, type GridSearchCliOptions } from './cli/grid-search.js';
import { calibrateCommand, type CalibrateCliOptions } from './cli/calibrate.js';
import { STDOUT, configureProgram, optionalTarget, packageVersion, parseChoice, parseIntOption, relaunchWithQuietNativeWarnings, runCli, writeTarget } from './cli-kit.js';
import { ADAPTER_KINDS, type AdapterKind } from './names.js';

const PROG = 'kernelkit';

function buildProgram(): Command {
  const program = configureProgram(
    new Command(PROG).description('kernelkit: parallel numeric kernels; picks the best backend that works and says why'),
    packageVersion(import.meta.url),
  );

  program
    .command('doctor')
    .description("every backend's availability and the reason, the WebGPU adapter, gpu.js modes, and what auto-selection picks")
    .option('--json [file]', `write the report as JSON to <file>; with no file or '${STDOUT}', to stdout (instead of the text report)`)
    .option('--threads <n>', 'Piscina worker count')
    .option('--adapter <kind>', `WebGPU adapter kind (${ADAPTER_KINDS.join('|')})`)
    .action(async (o: { json?: boolean | string; threads?: string; adapter?: string }) => {
      const threads = o.threads === undefined ? undefined : parseIntOption('--threads', o.threads, 1, 1024);
      const adapter = o.adapter === undefined ? undefined : parseChoice<AdapterKind>('--adapter', o.adapter, ADAPTER_KINDS);
      const report = await runDoctor({ ...(threads === undefined ? {} : { threads }), ...(adapter === undefined ? {} : { adapter }) });
      const json = optionalTarget(o.json);
      if (json === undefined) process.stdout.write(formatDoctor(report));
      else await writeTarget(json, JSON.stringify(report, null, 2) + '\n');
    });

  program
    .command('calibrate')
    .description("measures every op on every backend that starts here and saves the model auto-routing predicts with")
    .option('--budget <seconds>', 'time limit; what is left out is reported', '25')
    .option('--cache <file>', 'calibration cache file (default: KERNELKIT_CALIBRATION_CACHE, else ~/.cache/kernelkit/calibration.json)')
    .option('--threads <n>', 'Piscina worker count')
    .option('--adapter <kind>', `WebGPU adapter kind (${ADAPTER_KINDS.join('|')})`)
    .option('--json [file]', `write the model as JSON to <file>; with no file or '${STDOUT}', to stdout (instead of the text table)`)
    .option('--no-progress', 'no progress line even on a terminal')
    .action((o: CalibrateCliOptions) => calibrateCommand(o));

  program
    .command('grid-search')
    .description('the CS610 constrained grid search on the best backend; writes the CS610 results file')
    .option('--grid <file>', 'grid.txt (default: the CS610 file shipped in @kernelkit/ops)')
    .option('--disp <file>', 'disp.txt (default: the CS610 file shipped in @kernelkit/ops)')
    .option('--kk <number>', 'tolerance multiplier (e = kk·ey)', undefined)
    .option('--out <file>', `results file ('${STDOUT}': stdout)`, 'results.txt')
    .option('--backend <name>', 'force a backend (webgpu|piscina|cpu|gpujs)')
    .option('--variant <name>', 'grid-search variant of that backend')
    .option('--adapter <kind>', `WebGPU adapter kind (${ADAPTER_KINDS.join('|')})`)
    .option('--threads <n>', 'Piscina worker count')
    .option('--json [file]', `write the summary as JSON to <file>; with no file or '${STDOUT}', to stdout (instead of the text summary)`)
    .option('--no-progress', 'no progress line even on a terminal')
    .action((o: GridSearchCliOptions) => gridSearchCommand(o));
  return program;
}

const relaunched = await relaunchWithQuietNativeWarnings();
if (relaunched !== undefined) process.exitCode = relaunched;
else await runCli(PROG, () => buildProgram().parseAsync(process.argv).then(() => undefined));
