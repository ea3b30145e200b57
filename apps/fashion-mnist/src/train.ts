/**
 * Trains the ECE408 network with tfjs-layers (wasm backend, tfjs-backend-cpu as fallback) and
 * exports the weights in kernelkit layout to model/ (see src/model-format.ts).
 *
 *   node dist/train.js --epochs 3 --limit 60000 --batch-size 64 --seed 408
 *
 * The weights are written after every epoch, so a run cut short still leaves a usable model; the
 * final step measures test accuracy through src/network.ts on kernelkit's cpu backend, which is
 * the number the manifest records and the tests hold the model to.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Command, InvalidArgumentError as CommanderArgError } from 'commander';
import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import '@tensorflow/tfjs-backend-cpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { readIdxPair, type LabelledImages } from './idx.js';
import { writeModel, type ModelWeights } from './model-format.js';
import { CLASSES, CONV1_MAPS, CONV2_MAPS, CONV2_OUT, HIDDEN, K, POOL1, POOL2, POOL2_OUT } from './network.js';
import { MODEL_DIR, SYSTEM_DATA_DIR, TEST_DATA_DIR, splitFiles } from './paths.js';
import { INPUT_SIZE, MODEL_IMAGE, resizeBilinear } from './resize.js';
import { mulberry32, shuffledIndices } from './rng.js';
import { recordKernelkitAccuracy } from './evaluate-model.js';
import { registerWasmConv2dBackpropFilter } from './tfjs-wasm-patch.js';
import { errorMessage } from '@kernelkit/core';

const int = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new CommanderArgError(`expected a non-negative integer, got ${v}`);
  return n;
};

/** Uses the wasm backend when it loads, else tfjs-backend-cpu; returns the one that runs. */
async function pickBackend(wanted: 'wasm' | 'cpu'): Promise<{ name: string; note: string }> {
  if (wanted === 'wasm') {
    try {
      const require = createRequire(import.meta.url);
      setWasmPaths(dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm')) + '/');
      // Single-threaded on purpose: the machine is shared, and the threaded build needs a worker script Node cannot load from a path prefix.
      tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
      if (await tf.setBackend('wasm')) {
        registerWasmConv2dBackpropFilter();
        return { name: 'wasm', note: 'tfjs-backend-wasm (+ Conv2DBackpropFilter from src/tfjs-wasm-patch.ts)' };
      }
      return { name: await fallback(), note: 'wasm backend did not initialise; fell back to tfjs-backend-cpu' };
    } catch (err) {
      return { name: await fallback(), note: `wasm backend failed (${errorMessage(err)}); fell back to tfjs-backend-cpu` };
    }
  }
  return { name: await fallback(), note: 'tfjs-backend-cpu (asked for)' };
}

async function fallback(): Promise<string> {
  await tf.setBackend('cpu');
  return 'cpu';
}

function buildModel(seed: number): tfl.Sequential {
  const init = (n: number) => tfl.initializers.glorotUniform({ seed: seed + n });
  const m = tfl.sequential();
  m.add(tfl.layers.conv2d({ inputShape: [INPUT_SIZE, INPUT_SIZE, 1], filters: CONV1_MAPS, kernelSize: K, activation: 'relu', kernelInitializer: init(1), name: 'conv1' }));
  m.add(tfl.layers.maxPooling2d({ poolSize: POOL1, strides: POOL1 }));
  m.add(tfl.layers.conv2d({ filters: CONV2_MAPS, kernelSize: K, activation: 'relu', kernelInitializer: init(2), name: 'conv2' }));
  // Ceil-mode pooling (34 → 9). tfjs 'same' pooling would pad 1 row top and 1 bottom, shifting
  // every window; padding 2 zeros at the bottom/right then 'valid' pooling gives the ceil-mode
  // windows, and since the inputs are post-ReLU (≥ 0) a zero pad never changes a maximum.
  const pad = POOL2_OUT * POOL2 - CONV2_OUT;
  m.add(tfl.layers.zeroPadding2d({ padding: [[0, pad], [0, pad]] }));
  m.add(tfl.layers.maxPooling2d({ poolSize: POOL2, strides: POOL2, padding: 'valid' }));
  m.add(tfl.layers.flatten());
  m.add(tfl.layers.dense({ units: HIDDEN, activation: 'relu', kernelInitializer: init(3), name: 'fc1' }));
  m.add(tfl.layers.dense({ units: CLASSES, activation: 'softmax', kernelInitializer: init(4), name: 'fc2' }));
  return m;
}

/** tfjs HWIO / NHWC-flatten weights → kernelkit [M][C][K][K] and [out][in] (c·81 + y·9 + x). */
function exportWeights(m: tfl.Sequential): ModelWeights {
  const get = (layer: string, i: number): Float32Array => m.getLayer(layer).getWeights()[i]!.dataSync() as Float32Array;
  const hwioToMckk = (w: Float32Array, C: number, M: number): Float32Array => {
    const out = new Float32Array(M * C * K * K);
    for (let p = 0; p < K; p++) for (let q = 0; q < K; q++) for (let c = 0; c < C; c++) for (let mm = 0; mm < M; mm++) {
      out[((mm * C + c) * K + p) * K + q] = w[((p * K + q) * C + c) * M + mm]!;
    }
    return out;
  };
  const S = POOL2_OUT;
  const fc1 = get('fc1', 0); // [in = (y·9 + x)·16 + c][out]
  const fc1Out = new Float32Array(HIDDEN * CONV2_MAPS * S * S);
  for (let y = 0; y < S; y++) for (let x = 0; x < S; x++) for (let c = 0; c < CONV2_MAPS; c++) for (let o = 0; o < HIDDEN; o++) {
    fc1Out[o * CONV2_MAPS * S * S + (c * S + y) * S + x] = fc1[((y * S + x) * CONV2_MAPS + c) * HIDDEN + o]!;
  }
  const fc2 = get('fc2', 0); // [in][out]
  const fc2Out = new Float32Array(CLASSES * HIDDEN);
  for (let i = 0; i < HIDDEN; i++) for (let o = 0; o < CLASSES; o++) fc2Out[o * HIDDEN + i] = fc2[i * CLASSES + o]!;
  return {
    'conv1.weight': hwioToMckk(get('conv1', 0), 1, CONV1_MAPS),
    'conv1.bias': get('conv1', 1).slice(),
    'conv2.weight': hwioToMckk(get('conv2', 0), CONV1_MAPS, CONV2_MAPS),
    'conv2.bias': get('conv2', 1).slice(),
    'fc1.weight': fc1Out,
    'fc1.bias': get('fc1', 1).slice(),
    'fc2.weight': fc2Out,
    'fc2.bias': get('fc2', 1).slice(),
  };
}

/** Copies the chosen 28×28 images together and resizes them: `[n][86][86][1]`. */
function batchInput(data: LabelledImages, idx: Uint32Array, from: number, n: number): { x: Float32Array; y: Int32Array } {
  const px = data.rows * data.cols;
  const raw = new Uint8Array(n * px);
  const y = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const j = idx[from + i]!;
    raw.set(data.pixels.subarray(j * px, (j + 1) * px), i * px);
    y[i] = data.labels[j]!;
  }
  return { x: resizeBilinear({ pixels: raw, start: 0, count: n, inH: data.rows, inW: data.cols, outH: INPUT_SIZE, outW: INPUT_SIZE }), y };
}

/** tfjs's own view of test accuracy, 1000 images at a time (the whole set at 86×86 is ~300 MB). */
function tfjsTestAccuracy(model: tfl.Sequential, test: LabelledImages): number {
  let correct = 0;
  for (let first = 0; first < test.count; first += 1000) {
    const n = Math.min(1000, test.count - first);
    const x = resizeBilinear({ pixels: test.pixels, start: first, count: n, inH: test.rows, inW: test.cols, outH: INPUT_SIZE, outW: INPUT_SIZE });
    const pred = tf.tidy(() => tf.argMax(model.predict(tf.tensor4d(x, [n, INPUT_SIZE, INPUT_SIZE, 1])) as tf.Tensor, 1).dataSync());
    for (let i = 0; i < n; i++) if (pred[i] === test.labels[first + i]) correct++;
  }
  return correct / test.count;
}

async function main(): Promise<void> {
  const program = new Command('train')
    .description('train the ECE408 Fashion-MNIST network with tfjs and export kernelkit-layout weights')
    .option('--data <dir>', 'directory with train-{images-idx3,labels-idx1}-ubyte.gz', SYSTEM_DATA_DIR)
    .option('--out <dir>', 'model directory to write', MODEL_DIR)
    .option('--epochs <n>', 'epochs', int, 3)
    .option('--limit <n>', 'use the first n training images (0 = all)', int, 0)
    .option('--batch-size <n>', 'minibatch size', int, 64)
    .option('--lr <x>', 'Adam learning rate', Number, 0.001)
    .option('--seed <n>', 'seed for initialisation and shuffling', int, 408)
    .option('--max-batches <n>', 'stop after n minibatches and write nothing (timing probe)', int, 0)
    .option('--tfjs-backend <name>', 'wasm or cpu', 'wasm')
    .parse();
  const o = program.opts<{ data: string; out: string; epochs: number; limit: number; batchSize: number; lr: number; seed: number; maxBatches: number; tfjsBackend: 'wasm' | 'cpu' }>();
  const command = `node dist/train.js ${process.argv.slice(2).join(' ')}`.trim();

  const tfBackend = await pickBackend(o.tfjsBackend);
  console.log(`tfjs backend: ${tfBackend.name} (${tfBackend.note})`);
  const trainFiles = splitFiles(o.data, 'train');
  const train = await readIdxPair(trainFiles.images, trainFiles.labels, { imageSize: MODEL_IMAGE });
  const testFiles = splitFiles(TEST_DATA_DIR, 't10k');
  const test = await readIdxPair(testFiles.images, testFiles.labels, { imageSize: MODEL_IMAGE });
  const n = o.limit === 0 ? train.count : Math.min(o.limit, train.count);
  console.log(`training on ${n} of ${train.count} images, ${o.epochs} epoch(s), batch ${o.batchSize}, Adam lr ${o.lr}, seed ${o.seed}`);

  const model = buildModel(o.seed);
  model.compile({ optimizer: tf.train.adam(o.lr), loss: 'categoricalCrossentropy', metrics: ['accuracy'] });
  const rand = mulberry32(o.seed);
  const started = performance.now();
  let batches = 0;
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    // Shuffle the chosen subset only, so --limit always trains on the same images.
    const idx = shuffledIndices(n, rand);
    let lossSum = 0;
    let accSum = 0;
    let seen = 0;
    const epochStart = performance.now();
    for (let from = 0; from < n; from += o.batchSize) {
      const bs = Math.min(o.batchSize, n - from);
      const { x, y } = batchInput(train, idx, from, bs);
      const [loss, acc] = tf.tidy(() => [tf.tensor4d(x, [bs, INPUT_SIZE, INPUT_SIZE, 1]), tf.oneHot(tf.tensor1d(y, 'int32'), CLASSES)]) as [tf.Tensor, tf.Tensor];
      const r = (await model.trainOnBatch(loss, acc)) as number[];
      tf.dispose([loss, acc]);
      lossSum += (r[0] ?? 0) * bs;
      accSum += (r[1] ?? 0) * bs;
      seen += bs;
      batches++;
      if (batches % 50 === 0) {
        const s = (performance.now() - epochStart) / 1000;
        console.log(`epoch ${epoch + 1} batch ${batches}: ${seen}/${n} images, loss ${(lossSum / seen).toFixed(4)}, acc ${(accSum / seen).toFixed(4)}, ${s.toFixed(1)} s, ${((s / seen) * 1000).toFixed(2)} ms/image`);
      }
      if (o.maxBatches > 0 && batches >= o.maxBatches) {
        console.log(`probe: ${batches} batches, ${((performance.now() - started) / batches).toFixed(0)} ms/batch; nothing written`);
        return;
      }
    }
    const epochsDone = epoch + 1;
    const minutes = (performance.now() - started) / 60000;
    const tfjsAcc = tfjsTestAccuracy(model, test);
    console.log(`epoch ${epochsDone} done: train loss ${(lossSum / seen).toFixed(4)}, train acc ${(accSum / seen).toFixed(4)}, tfjs test acc ${tfjsAcc.toFixed(4)}, ${minutes.toFixed(1)} min`);
    writeModel(o.out, exportWeights(model), {
      training: { command, tfjsBackend: tfBackend.name, tfjsBackendNote: tfBackend.note, seed: o.seed, epochs: epochsDone, epochsRequested: o.epochs, trainImages: n, batchSize: o.batchSize, optimizer: `adam(lr=${o.lr})`, loss: 'categoricalCrossentropy', minutes: Number(minutes.toFixed(1)), tfjsTestAccuracy: tfjsAcc, resize: 'bilinear, align-corners, 28x28 -> 86x86, pixels/255 (src/resize.ts)' },
      // Provisional until the kernelkit-path evaluation below replaces it.
      testAccuracy: tfjsAcc,
    });
  }
  const acc = await recordKernelkitAccuracy(o.out, test);
  console.log(`kernelkit cpu-backend test accuracy: ${acc.testAccuracy.toFixed(4)}, first 1000: ${acc.testAccuracyFirst1000.toFixed(4)} (written to ${o.out}/manifest.json)`);
}

await main();
