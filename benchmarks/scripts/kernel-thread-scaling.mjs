// How far the conv-layer WebAssembly kernel itself scales over threads on this machine: no pool, no
// copies, no messages in the timed part. Each worker thread instantiates the kernels over its own
// shared memory holding its images and output; a round times one thread on the whole batch, then
// every thread at once on an equal share of it, then one thread on one share. The per-round ratio
// (whole batch on one thread ÷ all threads on their shares) is the most any pool can reach for this
// kernel here; "inflation" is how much slower a share runs when the other threads run too.
//   node benchmarks/scripts/kernel-thread-scaling.mjs [L1|L2] [THREADS=2] [ROUNDS=15] [relaxed]
import { Worker, isMainThread, workerData, parentPort } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { packedLength } from '@kernelkit/cpu';

const LAYERS = { L1: { c: 1, h: 86, m: 4, k: 7 }, L2: { c: 4, h: 40, m: 16, k: 7 } };
const BATCH = 100;

if (!isMainThread) {
  const { layer, file } = workerData;
  const { c, h, m, k } = LAYERS[layer];
  const oh = h - k + 1;
  const weightsLen = packedLength(m, c, k);
  const image = c * h * h;
  const plane = oh * oh;
  const inputAt = weightsLen + Math.ceil(m / 4) * 4 + 4;
  const outAt = inputAt + BATCH * image + 64;
  const pages = Math.ceil(((outAt + BATCH * m * plane) * 4) / 65536);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  const f = new Float32Array(memory.buffer);
  for (let i = 0; i < outAt; i++) f[i] = Math.random() - 0.5;
  const kernels = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(file)), { env: { memory } }).exports;
  const run = (images) => {
    for (let i = 0; i < images; i++) kernels.convLayer((inputAt + i * image) * 4, c, h, h, 0, m, k, weightsLen * 4, 0, (outAt + i * m * plane) * 4);
  };
  run(BATCH);
  const go = new Int32Array(workerData.go);
  parentPort.on('message', (images) => {
    // Every thread starts its timed run when the main thread releases them together.
    Atomics.wait(go, 0, 0);
    const t = performance.now();
    run(images);
    parentPort.postMessage(performance.now() - t);
  });
  parentPort.postMessage('ready');
} else {
  const [layer = 'L1', threadsArg = '2', roundsArg = '15', flavour = 'plain'] = process.argv.slice(2);
  const threads = Number(threadsArg);
  const rounds = Number(roundsArg);
  const cpuDist = join(dirname(createRequire(import.meta.url).resolve('@kernelkit/cpu')));
  const file = join(cpuDist, flavour === 'relaxed' ? 'kernels-relaxed-simd.wasm' : 'kernels-simd.wasm');
  if (!(layer in LAYERS) || !(threads >= 2) || BATCH % threads !== 0) throw new Error('usage: [L1|L2] [THREADS dividing 100] [ROUNDS] [plain|relaxed]');
  // Node 20 ships relaxed SIMD behind this flag (as KERNELKIT_WASM_SIMD=relaxed sets it); later Node versions have it on.
  if (flavour === 'relaxed') setFlagsFromString('--experimental-wasm-relaxed-simd');
  const go = new Int32Array(new SharedArrayBuffer(4));
  const workers = Array.from({ length: threads }, () => new Worker(new URL(import.meta.url), { workerData: { layer, file, go: go.buffer } }));
  await Promise.all(workers.map((w) => new Promise((r) => w.once('message', r))));
  const timed = async (ws, images) => {
    Atomics.store(go, 0, 0);
    const done = ws.map((w) => new Promise((r) => w.once('message', r)));
    for (const w of ws) w.postMessage(images);
    await new Promise((r) => setTimeout(r, 5));
    Atomics.store(go, 0, 1);
    Atomics.notify(go, 0);
    return Math.max(...(await Promise.all(done)));
  };
  const share = BATCH / threads;
  const rows = [];
  for (let r = 0; r < rounds + 2; r++) {
    const whole = await timed(workers.slice(0, 1), BATCH);
    const all = await timed(workers, share);
    const one = await timed(workers.slice(0, 1), share);
    if (r >= 2) rows.push({ whole, all, one });
  }
  const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
  console.log(JSON.stringify({
    layer, flavour, threads, rounds, node: process.version,
    oneThreadWholeMs: +median(rows.map((x) => x.whole)).toFixed(2),
    allThreadsShareMs: +median(rows.map((x) => x.all)).toFixed(2),
    oneThreadShareMs: +median(rows.map((x) => x.one)).toFixed(2),
    scaling: +median(rows.map((x) => x.whole / x.all)).toFixed(2),
    inflation: +median(rows.map((x) => x.all / x.one)).toFixed(2),
  }));
  await Promise.all(workers.map((w) => w.terminate()));
}
