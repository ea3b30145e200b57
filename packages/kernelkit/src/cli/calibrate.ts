import { createKernels } from '../kernels.js';
import { ADAPTER_KINDS, type AdapterKind } from '../names.js';
import { allBands, formatCostModel } from '../router/bands.js';
import type { CalibrationProgress } from '../router/calibrate.js';
import { STDOUT, optionalTarget, parseChoice, parseIntOption, stderrIsTerminal, syncStderr, writeTarget } from '../cli-kit.js';

export interface CalibrateCliOptions {
  readonly threads?: string;
  readonly adapter?: string;
  readonly budget?: string;
  readonly cache?: string;
  readonly json?: boolean | string;
  readonly progress?: boolean;
}

function progressWriter(enabled: boolean): ((p: CalibrationProgress) => void) | undefined {
  if (!enabled || !stderrIsTerminal()) return undefined;
  return (p) => process.stderr.write(`\rcalibrating: ${p.done}/${p.total} ${p.step.padEnd(28)} elapsed ${(p.elapsedMs / 1000).toFixed(1)} s  `);
}

/** Measures every op on every backend that starts and saves the model in the calibration cache. */
export async function calibrateCommand(o: CalibrateCliOptions): Promise<void> {
  const threads = o.threads === undefined ? undefined : parseIntOption('--threads', o.threads, 1, 1024);
  const adapter = o.adapter === undefined ? undefined : parseChoice<AdapterKind>('--adapter', o.adapter, ADAPTER_KINDS);
  const budgetMs = 1000 * (o.budget === undefined ? 25 : parseIntOption('--budget', o.budget, 1, 600));
  const kernels = await createKernels({
    route: 'auto',
    // This command is already a process of its own that measures and exits.
    calibrateIn: 'process',
    ...(threads === undefined ? {} : { threads }),
    ...(adapter === undefined ? {} : { adapter }),
    ...(o.cache === undefined ? {} : { calibrationCache: o.cache }),
  });
  try {
    const onProgress = progressWriter(o.progress !== false);
    const report = await kernels.calibrate({ force: true, budgetMs, ...(onProgress ? { onProgress } : {}) });
    if (onProgress) process.stderr.write('\n');
    await syncStderr();
    const json = optionalTarget(o.json);
    if (json !== undefined) await writeTarget(json, JSON.stringify({ ...report, bands: allBands(report.model), skippedBackends: kernels.skipped }, null, 2) + '\n');
    if (json !== STDOUT) {
      const lines = [
        `calibrated ${report.backends.join(', ')} in ${(report.ms / 1000).toFixed(1)} s (budget ${(report.budgetMs / 1000).toFixed(0)} s); ${report.saved}`,
        ...report.skipped.map((s) => `  left out: ${s}`),
        ...kernels.skipped.map((s) => `  skipped ${s.backend}: ${s.reason}`),
        '',
        ...formatCostModel(report.model),
      ];
      process.stdout.write(lines.join('\n') + '\n');
    }
  } finally {
    await kernels.dispose();
  }
}
