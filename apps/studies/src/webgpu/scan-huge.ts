/**
 * The out-of-core scan: `--elements` u32 values (default 4·10⁹, 16 GB: more than any buffer
 * binding or JavaScript typed array holds) through the WebGPU backend's streaming scan
 * (`webgpuScanStream`, carry kept on the GPU), every output element checked bit-exact against
 * the running u32 prefix sum (wrap-around). The input is a cheap hash of each element's index,
 * made on the fly by worker threads into a few reused shared buffers; the outputs are checked by
 * the same workers, each chunk from the previous chunk's last output (itself checked), so checks
 * run in parallel and the chain covers every element. Reports end-to-end GB/s and where the time
 * went: generating, checking, waiting on the GPU.
 *
 *   node apps/studies/dist/webgpu/scan-huge.js [--elements 4e9] [--start 0] [--chunk 16777216] [--adapter any|software|hardware] [--workers N] [--out DIR]
 */
import os from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Backend } from '@kernelkit/ops';
import { createWebGpuBackend, webgpuScanStream, type AdapterKind } from '@kernelkit/webgpu';
import { Command, InvalidArgumentError } from 'commander';
import { machineInfo, oneOf, parseStudyArgs, writeTextFile } from '../common.js';

/** A count like 4e9 or 4000000000: a whole number from 1 up to 2^53 − 1 (element indices stay exact). */
const count = (raw: string): number => {
  const v = Number(raw);
  if (!/^\d+(\.\d+)?(e\d+)?$/i.test(raw) || !Number.isSafeInteger(v) || v < 1) throw new InvalidArgumentError(`expected a whole number from 1 to 2^53-1 (4e9 works), got ${raw}`);
  return v;
};

/** A count from 0 up (the --start index). */
const index = (raw: string): number => (raw === '0' ? 0 : count(raw));

const argv = parseStudyArgs<{ elements: number; start: number; chunk: number; adapter: AdapterKind; workers: number; variant?: string; out?: string }>(
  new Command('scan-huge')
    .description('u32 scan of --elements values (default 4e9, 16 GB) through the WebGPU streaming scan, every output checked bit-exact')
    .option('--elements <n>', 'elements in all (4e9 notation works)', count, 4e9)
    .option('--start <i>', 'index of the first element, so a short run can cross 2^32 (e.g. 4294967000)', index, 0)
    .option('--chunk <n>', 'elements per chunk fed to the stream', count, 2 ** 24)
    .option('--adapter <kind>', 'any, software or hardware', oneOf<AdapterKind>(['any', 'software', 'hardware']), 'any')
    .option('--workers <n>', 'worker threads that generate and check chunks (default: cores − 1, at least 2)', count, Math.max(2, os.availableParallelism() - 1))
    .option('--variant <name>', "the stream's kernel: decoupled or decoupled-subgroups (default: the stream's)")
    .option('--out <dir>', 'where webgpu-scan-huge.json and webgpu-scan-huge.md go'),
);
const { elements, start: first, adapter, workers: workerCount } = argv;
if (first + elements > Number.MAX_SAFE_INTEGER) {
  process.stderr.write(`error: --start + --elements must stay below 2^53, got ${first} + ${elements}\n`);
  process.exit(2);
}
// A chunk is one typed array: it cannot be longer than the whole input.
const chunk = Math.min(argv.chunk, elements);
const chunks = Math.ceil(elements / chunk);
const chunkStart = (c: number): number => first + c * chunk;
const chunkLength = (c: number): number => Math.min(chunk, elements - c * chunk);
const range = first === 0 ? '' : ` (elements ${first} to ${first + elements - 1})`;

// ---- the input and its check. Both run in the workers from their source text, so they use
// nothing outside themselves. Element i is a hash of (i mod 2^32, floor(i / 2^32)): every bit
// varies, the running sum wraps every few elements, and indices past 2^32 differ from those below.

/** Writes elements start … start + a.length − 1 into `a`. */
function fillChunk(a: Uint32Array, start: number): void {
  let lo = start >>> 0;
  let hi = Math.floor(start / 4294967296);
  let salt = Math.imul(hi, 0x85ebca6b);
  for (let j = 0; j < a.length; j++) {
    a[j] = (Math.imul(lo ^ (lo >>> 15), 0x2c1b3c6d) ^ salt) >>> 0;
    lo = (lo + 1) >>> 0;
    if (lo === 0) salt = Math.imul(++hi, 0x85ebca6b);
  }
}

/** The first j where `out` is not the inclusive u32 scan of elements start … with `carry` added, or −1. */
function checkChunk(out: Uint32Array, start: number, carry: number): { bad: number; got: number; want: number } {
  let lo = start >>> 0;
  let hi = Math.floor(start / 4294967296);
  let salt = Math.imul(hi, 0x85ebca6b);
  let s = carry >>> 0;
  for (let j = 0; j < out.length; j++) {
    s = (s + ((Math.imul(lo ^ (lo >>> 15), 0x2c1b3c6d) ^ salt) >>> 0)) >>> 0;
    if (out[j] !== s) return { bad: j, got: out[j]!, want: s };
    lo = (lo + 1) >>> 0;
    if (lo === 0) salt = Math.imul(++hi, 0x85ebca6b);
  }
  return { bad: -1, got: 0, want: 0 };
}

const WORKER = `
const { parentPort } = require('node:worker_threads');
${fillChunk.toString()}
${checkChunk.toString()}
parentPort.on('message', (m) => {
  const t0 = performance.now();
  if (m.kind === 'fill') {
    fillChunk(new Uint32Array(m.sab, 0, m.length), m.start);
    parentPort.postMessage({ id: m.id, ms: performance.now() - t0 });
  } else {
    const r = checkChunk(new Uint32Array(m.buffer, 0, m.length), m.start, m.carry);
    parentPort.postMessage({ id: m.id, ms: performance.now() - t0, ...r });
  }
});
`;

type Task = { readonly kind: 'fill'; readonly sab: SharedArrayBuffer; readonly length: number; readonly start: number } | { readonly kind: 'check'; readonly buffer: ArrayBuffer; readonly length: number; readonly start: number; readonly carry: number };
type Reply = { readonly id: number; readonly ms: number; readonly bad?: number; readonly got?: number; readonly want?: number };

type Queued = { readonly task: Task; readonly done: (r: Reply) => void; readonly failed: (e: Error) => void };

/** Worker threads taking fills before checks: a fill is on the stream's path, a check is not. */
class Pool {
  private readonly idle: Worker[] = [];
  private readonly fills: Queued[] = [];
  private readonly checks: Queued[] = [];
  private readonly waiting = new Map<number, Queued>();
  private readonly all: Worker[] = [];
  private nextId = 0;
  private error: Error | undefined;
  /** Worker time per kind of task. */
  readonly busyMs = { fill: 0, check: 0 };

  constructor(n: number) {
    for (let i = 0; i < n; i++) {
      const w = new Worker(WORKER, { eval: true });
      w.on('message', (r: Reply) => {
        const q = this.waiting.get(r.id)!;
        this.waiting.delete(r.id);
        this.busyMs[q.task.kind] += r.ms;
        q.done(r);
        this.idle.push(w);
        this.pump();
      });
      // A worker that dies (out of memory) fails every task, so the run stops instead of waiting forever.
      w.on('error', (e) => this.fail(e));
      this.all.push(w);
      this.idle.push(w);
    }
  }

  run(task: Task): Promise<Reply> {
    return new Promise((done, failed) => {
      if (this.error !== undefined) return failed(this.error);
      (task.kind === 'fill' ? this.fills : this.checks).push({ task, done, failed });
      this.pump();
    });
  }

  private fail(e: Error): void {
    this.error = e;
    for (const q of [...this.waiting.values(), ...this.fills.splice(0), ...this.checks.splice(0)]) q.failed(e);
    this.waiting.clear();
  }

  private pump(): void {
    while (this.idle.length > 0) {
      const next = this.fills.shift() ?? this.checks.shift();
      if (next === undefined) return;
      const id = this.nextId++;
      this.waiting.set(id, next);
      this.idle.pop()!.postMessage({ id, ...next.task }, next.task.kind === 'check' ? [next.task.buffer] : []);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((w) => w.terminate()));
  }
}

// ---- the run

const pool = new Pool(workerCount);
const backend: Backend = await createWebGpuBackend({ adapter });
const description = backend.info.description;
console.log(`${description}; ${elements} u32${range} (${((elements * 4) / 1e9).toFixed(2)} GB) in ${chunks} chunks of ${chunk}; ${workerCount} workers generate and check`);

/** Shared input buffers, reused once the chunk they held has come out of the stream. */
const free: SharedArrayBuffer[] = [];
const slotOf = new Map<number, SharedArrayBuffer>();
const filled = new Map<number, Promise<unknown>>();
let slots = 0;
// Chunks generated ahead of the stream: enough to keep it fed while workers also check.
const ahead = Math.max(2, Math.ceil(workerCount / 2));
let sourceWaitMs = 0;

function startFill(c: number): void {
  if (c >= chunks || filled.has(c)) return;
  let sab = free.pop();
  // No free buffer: the stream still holds them all (chunks in flight), so make one more rather than wait for it.
  if (sab === undefined) {
    sab = new SharedArrayBuffer(chunk * 4);
    slots++;
  }
  slotOf.set(c, sab);
  filled.set(c, pool.run({ kind: 'fill', sab, length: chunkLength(c), start: chunkStart(c) }));
}

async function* source(): AsyncGenerator<Uint32Array> {
  for (let c = 0; c < chunks; c++) {
    for (let k = c; k < c + ahead; k++) startFill(k);
    const t0 = performance.now();
    await filled.get(c);
    sourceWaitMs += performance.now() - t0;
    filled.delete(c);
    yield new Uint32Array(slotOf.get(c)!, 0, chunkLength(c));
  }
}

interface Failure {
  readonly chunk: number;
  readonly index: number;
  readonly got: number;
  readonly want: number;
}
let failure: Failure | undefined;
const checks: Promise<void>[] = [];
let checkWaitMs = 0;
let streamWaitMs = 0;
let done = 0;
let prevLast = 0;
const tty = process.stderr.isTTY === true;
let lastShown = 0;

const t0 = performance.now();
const it = webgpuScanStream(backend, source(), argv.variant === undefined ? {} : { variant: argv.variant });
try {
  for (let c = 0; ; c++) {
    const tw = performance.now();
    const step = await it.next();
    streamWaitMs += performance.now() - tw;
    if (step.done === true) break;
    const out = step.value as Uint32Array;
    // The chunk's input buffer is free once its output is out.
    free.push(slotOf.get(c)!);
    slotOf.delete(c);
    const length = out.length;
    const carry = prevLast;
    prevLast = out[length - 1]!;
    // Handed to a worker without a copy when the array owns its whole buffer (`out` is detached after that).
    const own = out.buffer instanceof ArrayBuffer && out.byteOffset === 0 && out.byteLength === out.buffer.byteLength;
    const buffer = own ? (out.buffer as ArrayBuffer) : out.slice().buffer;
    const start = chunkStart(c);
    checks.push(
      pool.run({ kind: 'check', buffer, length, start, carry }).then((r) => {
        if (r.bad !== undefined && r.bad >= 0 && (failure === undefined || c < failure.chunk)) failure = { chunk: c, index: start + r.bad, got: r.got!, want: r.want! };
      }),
    );
    done += length;
    // At most two checks per worker queued: outputs waiting for a check are memory.
    if (checks.length > 2 * workerCount) {
      const tc = performance.now();
      await checks.shift();
      checkWaitMs += performance.now() - tc;
    }
    if (failure !== undefined) break;
    if (tty && performance.now() - lastShown > 250) {
      lastShown = performance.now();
      const s = (lastShown - t0) / 1000;
      process.stderr.write(`\r${done.toExponential(3)} / ${elements.toExponential(3)} elements (${((100 * done) / elements).toFixed(1)}%), ${((done * 4) / 1e9 / s).toFixed(2)} GB/s, ${s.toFixed(1)} s   `);
    }
  }
} finally {
  await it.return(undefined);
}
const tc = performance.now();
await Promise.all(checks);
checkWaitMs += performance.now() - tc;
const wallMs = performance.now() - t0;
if (tty) process.stderr.write('\n');
await backend.dispose();
await pool.close();

const complete = done === elements && failure === undefined;
const result = {
  schema: 'kernelkit-webgpu-scan-huge/1',
  date: new Date().toISOString(),
  machine: machineInfo(),
  adapter: description,
  elements,
  start: first,
  elementsDone: done,
  chunk,
  chunks,
  workers: workerCount,
  variant: argv.variant ?? 'default',
  check: failure === undefined ? (done === elements ? 'every output element bit-exact' : 'stopped early') : `chunk ${failure.chunk}: element ${failure.index} is ${failure.got}, the running u32 sum is ${failure.want}`,
  wallMs,
  /** Input bytes per second of wall time; the stream also moves as many output bytes back. */
  inputGBps: (done * 4) / 1e9 / (wallMs / 1000),
  streamWaitMs,
  sourceWaitMs,
  gpuWaitMs: streamWaitMs - sourceWaitMs,
  checkWaitMs,
  generateBusyMs: pool.busyMs.fill,
  checkBusyMs: pool.busyMs.check,
  inputBuffers: slots,
};
const ms = (v: number): string => `${(v / 1000).toFixed(2)} s`;
const md = [
  `# WebGPU out-of-core scan: ${elements.toExponential(2)} u32 (${adapter} adapter)`,
  '',
  `${description}. ${machineInfo().cpu}, ${machineInfo().cores} cores. ${result.date.slice(0, 10)}.`,
  '',
  `\`node apps/studies/dist/webgpu/scan-huge.js --elements ${elements}${first === 0 ? '' : ` --start ${first}`} --chunk ${chunk} --adapter ${adapter} --workers ${workerCount}${argv.variant === undefined ? '' : ` --variant ${argv.variant}`}\``,
  '',
  '| | |',
  '|---|---|',
  `| elements | ${done} of ${elements}${range} (${((elements * 4) / 1e9).toFixed(2)} GB of input) |`,
  `| chunks | ${chunks} of ${chunk} elements (the last ${chunkLength(chunks - 1)}) |`,
  `| check | ${result.check} |`,
  `| wall time | ${ms(wallMs)} |`,
  `| end to end | ${result.inputGBps.toFixed(2)} GB/s of input (as many bytes come back) |`,
  `| waiting on the stream | ${ms(streamWaitMs)}: ${ms(result.gpuWaitMs)} on the GPU and its transfers, ${ms(sourceWaitMs)} for generated input |`,
  `| waiting on checks | ${ms(checkWaitMs)} |`,
  `| worker time | generating ${ms(result.generateBusyMs)}, checking ${ms(result.checkBusyMs)} (${workerCount} workers) |`,
  `| input buffers | ${slots} of ${((chunk * 4) / 2 ** 20).toFixed(0)} MiB, reused |`,
  '',
  'The input is a hash of each element\'s index, made by the workers into shared buffers reused once their chunk has come out of the stream. Each output chunk is checked by a worker against the running u32 sum started from the previous chunk\'s last output, which that chunk\'s own check covers: every element is checked. "On the GPU and its transfers" is the time the loop waited for the stream\'s next output less the time the stream waited for input.',
  '',
];
console.log(md.join('\n'));
if (argv.out !== undefined) {
  await writeTextFile(join(argv.out, 'webgpu-scan-huge.json'), JSON.stringify(result, null, 2) + '\n');
  await writeTextFile(join(argv.out, 'webgpu-scan-huge.md'), md.join('\n'));
}
if (!complete) process.exitCode = 1;
