#!/usr/bin/env node
/**
 * Inference on the committed Fashion-MNIST test set with both conv layers on a kernelkit backend.
 *
 *   node dist/cli.js --batch 1000 --backend auto
 *   node dist/cli.js --batch 1000 --compare     # every backend, same images, labels must agree
 */
import { Command, CommanderError, InvalidArgumentError as CommanderArgError, Option } from 'commander';
import type { Backend } from '@kernelkit/ops';
import { BACKEND_CHOICES, errorReason, openAll, openAuto, openBackend, type BackendChoice } from './backends.js';
import { evaluate, type Evaluation } from './evaluate.js';
import { readIdxPair } from './idx.js';
import { readModel } from './model-format.js';
import { MODEL_DIR, TEST_DATA_DIR, splitFiles } from './paths.js';
import { evaluationJson, formatEvaluation } from './report.js';

interface Options {
  batch: number;
  chunk?: number;
  backend: BackendChoice;
  variant?: string;
  compare: boolean;
  json: boolean;
  data: string;
  model: string;
}

const positive = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new CommanderArgError(`expected a positive integer, got ${v}`);
  return n;
};

async function single(o: Options, run: (b: Backend) => Promise<Evaluation>): Promise<void> {
  const opened = o.backend === 'auto' ? await openAuto(o.variant) : await openBackend(o.backend);
  try {
    const e = await run(opened.backend);
    const notes = [...opened.notes, opened.backend.info.description];
    console.log(o.json ? JSON.stringify(evaluationJson(e, notes), null, 2) : formatEvaluation(e, notes));
  } finally {
    await opened.backend.dispose();
  }
}

async function compare(o: Options, run: (b: Backend) => Promise<Evaluation>): Promise<boolean> {
  const { opened, skipped } = await openAll();
  const results: Evaluation[] = [];
  const notes = opened.map(({ backend }) => [backend.info.description]);
  try {
    for (const { backend } of opened) results.push(await run(backend));
  } finally {
    for (const { backend } of opened) await backend.dispose();
  }
  const base = results[0];
  const disagreements = results.slice(1).map((r) => {
    const indices: number[] = [];
    for (let i = 0; i < r.count; i++) if (r.predictions[i] !== base?.predictions[i]) indices.push(i);
    return { backend: r.backend, against: base?.backend ?? 'none', indices };
  });
  const agree = disagreements.every((d) => d.indices.length === 0);
  if (o.json) {
    console.log(JSON.stringify({ agree, results: results.map((r, i) => evaluationJson(r, notes[i] ?? [])), skipped, disagreements }, null, 2));
  } else {
    results.forEach((r, i) => console.log(formatEvaluation(r, notes[i] ?? []) + '\n'));
    for (const s of skipped) console.log(`skipped ${s.backend}: ${s.reason}`);
    for (const d of disagreements) {
      console.log(d.indices.length === 0 ? `${d.backend} agrees with ${d.against} on all ${o.batch} labels` : `${d.backend} disagrees with ${d.against} on ${d.indices.length} image(s): ${d.indices.slice(0, 50).join(', ')}${d.indices.length > 50 ? ', …' : ''}`);
    }
    if (results.length < 2) console.log(`only ${results.length} backend(s) ran; nothing to compare against`);
  }
  return agree;
}

async function main(): Promise<void> {
  const program = new Command('kernelkit-fashion-mnist')
    .description('ECE408 CNN on the Fashion-MNIST test set; both conv layers run on kernelkit convLayer')
    .addOption(new Option('--batch <n>', 'test images to classify').choices(['100', '1000', '10000']).default('1000'))
    .option('--chunk <n>', 'images per forward pass (default: min(batch, 1000))', positive)
    .addOption(new Option('--backend <name>', 'kernelkit backend; auto = the kernelkit facade').choices(BACKEND_CHOICES).default('auto'))
    .option('--variant <name>', 'convLayer variant (default: the backend default)')
    .option('--compare', 'run every available backend on the same images and check the labels agree', false)
    .option('--json', 'print JSON', false)
    .option('--data <dir>', 'directory with t10k-{images-idx3,labels-idx1}-ubyte.gz', TEST_DATA_DIR)
    .option('--model <dir>', 'model directory (manifest.json + weights.bin)', MODEL_DIR)
    .exitOverride()
    .parse();
  const raw = program.opts<Omit<Options, 'batch'> & { batch: string }>();
  const o: Options = { ...raw, batch: Number(raw.batch) };
  const files = splitFiles(o.data, 't10k');
  const test = readIdxPair(files.images, files.labels);
  if (test.count < o.batch) throw new CommanderArgError(`--batch ${o.batch}: ${files.images} holds only ${test.count} images`);
  const { weights } = readModel(o.model);
  const chunk = Math.min(o.chunk ?? 1000, o.batch);
  const run = (b: Backend): Promise<Evaluation> => evaluate(b, weights, test, o.variant === undefined ? { count: o.batch, chunk } : { count: o.batch, chunk, variant: o.variant });
  if (o.compare) {
    if (!(await compare(o, run))) process.exitCode = 1;
  } else {
    await single(o, run);
  }
}

/** Usage mistakes exit 2, as the kernelkit and bench CLIs do; failures while running exit 1. */
const EXIT_USAGE = 2;

try {
  await main();
} catch (err) {
  if (err instanceof CommanderError) {
    // Commander printed its message already; --help is a success.
    process.exitCode = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? 0 : EXIT_USAGE;
  } else {
    console.error(`kernelkit-fashion-mnist: ${errorReason(err)}`);
    process.exitCode = err instanceof CommanderArgError ? EXIT_USAGE : 1;
  }
}
