#!/usr/bin/env node
/**
 * Inference on the committed Fashion-MNIST test set with both conv layers on a kernelkit backend.
 *
 *   node dist/cli.js --batch 1000 --backend auto
 *   node dist/cli.js --batch 1000 --compare     # every backend, same images, labels must agree
 */
import { join } from 'node:path';
import { Command, InvalidArgumentError as CommanderArgError, Option } from 'commander';
import type { Backend } from '@kernelkit/ops';
import { STDOUT, UsageError, checkOutputPaths, configureProgram, optionalTarget, packageVersion, relaunchWithQuietNativeWarnings, runCli, writeTarget } from 'kernelkit/cli-kit';
import { BACKEND_CHOICES, openAll, openAuto, openBackend, type BackendChoice } from './backends.js';
import { evaluate, type Evaluation } from './evaluate.js';
import { readIdxPair } from './idx.js';
import { readModel } from './model-format.js';
import { MODEL_IMAGE } from './resize.js';
import { MODEL_DIR, TEST_DATA_DIR, splitFiles } from './paths.js';
import { evaluationJson, formatEvaluation } from './report.js';

interface Options {
  batch: number;
  chunk?: number;
  backend: BackendChoice;
  variant?: string;
  compare: boolean;
  /** Where the JSON goes (a file, or `-` for stdout); undefined: the text report on stdout. */
  json?: string;
  data: string;
  model: string;
}

const positive = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new CommanderArgError(`expected a positive integer, got ${v}`);
  return n;
};

const PROG = 'kernelkit-fashion-mnist';

/** The JSON to its --json target (a file, or stdout for `-`); returns whether stdout is still free for the text report. */
async function writeJson(o: Options, json: unknown): Promise<boolean> {
  if (o.json !== undefined) await writeTarget(o.json, JSON.stringify(json, null, 2) + '\n');
  return o.json !== STDOUT;
}

/** An unknown --variant is a usage error naming the backend's convLayer variants. */
function checkVariant(o: Options, backend: Backend): void {
  const variants = backend.variants('convLayer');
  if (o.variant !== undefined && !variants.includes(o.variant)) {
    throw new UsageError('--variant', `the ${backend.name} backend has no convLayer variant ${JSON.stringify(o.variant)} (it has: ${variants.join(', ')})`);
  }
}

async function single(o: Options, run: (b: Backend) => Promise<Evaluation>): Promise<void> {
  const opened = o.backend === 'auto' ? await openAuto(o.variant) : await openBackend(o.backend);
  try {
    checkVariant(o, opened.backend);
    const e = await run(opened.backend);
    const notes = [...opened.notes, opened.backend.info.description];
    if (await writeJson(o, evaluationJson(e, notes))) console.log(formatEvaluation(e, notes));
  } finally {
    await opened.backend.dispose();
  }
}

async function compare(o: Options, run: (b: Backend) => Promise<Evaluation>): Promise<boolean> {
  const { opened, skipped } = await openAll();
  const results: Evaluation[] = [];
  const notes = opened.map(({ backend }) => [backend.info.description]);
  try {
    for (const { backend } of opened) checkVariant(o, backend);
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
  if (await writeJson(o, { agree, results: results.map((r, i) => evaluationJson(r, notes[i] ?? [])), skipped, disagreements })) {
    results.forEach((r, i) => console.log(formatEvaluation(r, notes[i] ?? []) + '\n'));
    for (const s of skipped) console.log(`skipped ${s.backend}: ${s.reason}`);
    for (const d of disagreements) {
      console.log(d.indices.length === 0 ? `${d.backend} agrees with ${d.against} on all ${o.batch} labels` : `${d.backend} disagrees with ${d.against} on ${d.indices.length} image(s): ${d.indices.slice(0, 50).join(', ')}${d.indices.length > 50 ? ', …' : ''}`);
    }
    if (results.length < 2) console.log(`only ${results.length} backend(s) ran; nothing to compare against`);
  }
  return agree;
}

async function main(): Promise<number> {
  const program = configureProgram(new Command(PROG), packageVersion(import.meta.url))
    .description('ECE408 CNN on the Fashion-MNIST test set; both conv layers run on kernelkit convLayer')
    .addOption(new Option('--batch <n>', 'test images to classify').choices(['100', '1000', '10000']).default('1000'))
    .option('--chunk <n>', 'images per forward pass (default: min(batch, 1000))', positive)
    .addOption(new Option('--backend <name>', 'kernelkit backend; auto = the kernelkit facade').choices(BACKEND_CHOICES).default('auto'))
    .option('--variant <name>', 'convLayer variant (default: the backend default)')
    .option('--compare', 'run every available backend on the same images and check the labels agree', false)
    .option('--json [file]', `write the results as JSON to <file>; with no file or '${STDOUT}', print them on stdout instead of the text report`)
    .option('--data <dir>', 'directory with t10k-{images-idx3,labels-idx1}-ubyte.gz', TEST_DATA_DIR)
    .option('--model <dir>', 'model directory (manifest.json + weights.bin)', MODEL_DIR)
    .parse();
  const { batch, json: jsonOption, ...rest } = program.opts<Omit<Options, 'batch' | 'json'> & { batch: string; json?: boolean | string }>();
  const json = optionalTarget(jsonOption);
  const o: Options = { ...rest, batch: Number(batch), ...(json === undefined ? {} : { json }) };
  const files = splitFiles(o.data, 't10k');
  // Before any work: a --json file that cannot be written, or that names an input, costs nothing.
  if (json !== undefined) {
    const data = [files.images, files.labels].map((path) => ({ option: '--data', path }));
    const model = ['manifest.json', 'weights.bin'].map((name) => ({ option: '--model', path: join(o.model, name) }));
    await checkOutputPaths([{ option: '--json', path: json }], [...data, ...model]);
  }
  const test = await readIdxPair(files.images, files.labels, { imageSize: MODEL_IMAGE });
  if (test.count < o.batch) throw new UsageError('--batch', `${files.images} holds only ${test.count} images, fewer than ${o.batch}`);
  const { weights } = await readModel(o.model);
  const chunk = Math.min(o.chunk ?? 1000, o.batch);
  const run = (b: Backend): Promise<Evaluation> => evaluate(b, weights, test, o.variant === undefined ? { count: o.batch, chunk } : { count: o.batch, chunk, variant: o.variant });
  if (o.compare) return (await compare(o, run)) ? 0 : 1;
  await single(o, run);
  return 0;
}

const relaunched = await relaunchWithQuietNativeWarnings();
if (relaunched !== undefined) process.exitCode = relaunched;
else await runCli(PROG, main);
