/**
 * The machine's compute ceiling for threads, measured once per bench run beside the memory
 * floor: independent WebAssembly SIMD multiply-add chains (no memory traffic) on one thread, then
 * the same work on every thread at once. Their throughput ratio is the most any backend's
 * multi-thread speed-up can reach in this run: on a VM whose second core is shared it can be
 * well under the thread count, and then a pool's rows are bounded by the machine, not the pool.
 */
import { Worker } from 'node:worker_threads';
import { median } from '@kernelkit/core';

export interface ComputeCeiling {
  /** Worker threads of the all-threads run. */
  readonly threads: number;
  /** Runs of each probe; the times are their medians. */
  readonly samples: number;
  /** Multiply-add chain iterations per thread and run (12 f32x4 chains: 48 multiply-adds each). */
  readonly iterations: number;
  /** One thread alone. */
  readonly oneThreadMs: number;
  /** Every thread at once, each doing the one-thread work (the slowest thread's finish). */
  readonly allThreadsMs: number;
  /** threads × oneThreadMs ÷ allThreadsMs: the all-threads throughput over one thread's. */
  readonly speedup: number;
}

/** The one part of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
const wasm = (globalThis as { WebAssembly?: { validate(bytes: Uint8Array): boolean } }).WebAssembly;

const CHAINS = 12;
const SAMPLES = 5;

/**
 * The probe module, assembled here so it needs no build step. Its text form:
 *
 *   (module
 *     (func (export "alu") (param $n i32) (result f32)
 *       (local $a0 v128) … (local $a11 v128) (local $m v128) (local $c v128)
 *       ;; $ai = splat(1 + i/16), $m = splat(0.999), $c = splat(0.001)
 *       (loop $next
 *         ;; for each chain i: $ai = $ai · $m + $c   (converges to 1: no overflow, no subnormals)
 *         (local.set $a0 (f32x4.add (f32x4.mul (local.get $a0) (local.get $m)) (local.get $c)))
 *         …
 *         (br_if $next (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
 *       ;; the sum of all chains, so none is dead code
 *       (f32x4.extract_lane 0 (f32x4.add … (f32x4.add (local.get $a0) (local.get $a1)) …))))
 *
 * Twelve chains keep every SIMD adder and multiplier busy; each chain depends only on itself.
 */
export function aluProbeModuleBytes(): Uint8Array {
  const f32 = (v: number): number[] => [...new Uint8Array(new Float32Array([v]).buffer)];
  const SIMD = 0xfd;
  const SPLAT = [SIMD, 0x13];
  const ADD = [SIMD, 0xe4, 0x01];
  const MUL = [SIMD, 0xe6, 0x01];
  const EXTRACT_LANE_0 = [SIMD, 0x1f, 0x00];
  const [GET, SET, TEE, CONST_F32, CONST_I32, I32_SUB, LOOP, BR_IF, END, VOID] = [0x20, 0x21, 0x22, 0x43, 0x41, 0x6b, 0x03, 0x0d, 0x0b, 0x40];
  // Locals: 0 = $n, 1..12 = chains, 13 = $m, 14 = $c.
  const m = CHAINS + 1;
  const c = CHAINS + 2;
  const body: number[] = [1, CHAINS + 2, 0x7b];
  for (let i = 1; i <= CHAINS; i++) body.push(CONST_F32, ...f32(1 + i / 16), ...SPLAT, SET, i);
  body.push(CONST_F32, ...f32(0.999), ...SPLAT, SET, m, CONST_F32, ...f32(0.001), ...SPLAT, SET, c);
  body.push(LOOP, VOID);
  for (let i = 1; i <= CHAINS; i++) body.push(GET, i, GET, m, ...MUL, GET, c, ...ADD, SET, i);
  body.push(GET, 0, CONST_I32, 1, I32_SUB, TEE, 0, BR_IF, 0, END);
  body.push(GET, 1);
  for (let i = 2; i <= CHAINS; i++) body.push(GET, i, ...ADD);
  body.push(...EXTRACT_LANE_0, END);
  const section = (id: number, content: number[]): number[] => [id, ...leb(content.length), ...content];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, 1, 0x7f, 1, 0x7d]), // one type: (i32) -> f32
    ...section(3, [1, 0]), // one function of that type
    ...section(7, [1, 3, ...[0x61, 0x6c, 0x75], 0x00, 0]), // exported as "alu"
    ...section(10, [1, ...leb(body.length), ...body]),
  ]);
}

/** Unsigned LEB128, as the binary format writes sizes. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

// Each worker compiles the module bytes it is sent, then answers every iteration count with the
// ms its run took; a first batch of short runs lets V8 compile the function with its optimizing tier.
const WORKER_SOURCE = `const { parentPort } = require('node:worker_threads');
let alu;
parentPort.on('message', (m) => {
  if (m.bytes) {
    alu = new WebAssembly.Instance(new WebAssembly.Module(m.bytes), {}).exports.alu;
    for (let i = 0; i < 200; i++) alu(20000);
    parentPort.postMessage(0);
    return;
  }
  const t = performance.now();
  alu(m.iterations);
  parentPort.postMessage(performance.now() - t);
});`;

const ask = (w: Worker, message: object): Promise<number> =>
  new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    w.once('error', onError);
    w.once('message', (ms: number) => {
      w.off('error', onError);
      resolve(ms);
    });
    w.postMessage(message);
  });

/** Runs `iterations` on every worker at once; resolves with the wall time until the last is done. */
async function runAll(workers: readonly Worker[], iterations: number): Promise<number> {
  const t = performance.now();
  await Promise.all(workers.map((w) => ask(w, { iterations })));
  return performance.now() - t;
}

/**
 * Measures the ceiling on `threads` worker threads (started and warmed before any timing), each
 * run about `runMs` long on one thread, or undefined where the runtime has no WebAssembly SIMD.
 */
export async function measureComputeCeiling(threads: number, runMs: number): Promise<ComputeCeiling | undefined> {
  const bytes = aluProbeModuleBytes();
  if (wasm === undefined || !wasm.validate(bytes)) return undefined;
  const workers = Array.from({ length: threads }, () => new Worker(WORKER_SOURCE, { eval: true }));
  try {
    await Promise.all(workers.map((w) => ask(w, { bytes })));
    const probe = 200_000;
    const probeMs = await ask(workers[0]!, { iterations: probe });
    const iterations = Math.max(probe, Math.round((probe * runMs) / Math.max(probeMs, 0.01)));
    const one: number[] = [];
    const all: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      one.push(await runAll(workers.slice(0, 1), iterations));
      all.push(await runAll(workers, iterations));
    }
    const oneThreadMs = median(one);
    const allThreadsMs = median(all);
    return { threads, samples: SAMPLES, iterations, oneThreadMs, allThreadsMs, speedup: (threads * oneThreadMs) / allThreadsMs };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/**
 * One thread's f32 GFLOP/s in the probe: 4 lanes × a multiply and an add per chain and iteration.
 * A kernel built with plain 128-bit SIMD (a multiply, then an add) cannot beat it on one thread;
 * runtimes with fused multiply-adds or wider vectors (the peers' native kernels) can.
 */
export const oneThreadGflops = (c: ComputeCeiling): number => (c.iterations * CHAINS * 4 * 2) / (c.oneThreadMs * 1e6);

/** The report's line, e.g. "2-thread compute ceiling: 1.93× in this run (…)". */
export function ceilingLine(c: ComputeCeiling): string {
  return (
    `${c.threads}-thread compute ceiling: ${c.speedup.toFixed(2)}× in this run (WebAssembly SIMD multiply-add chains, no memory traffic, median of ${c.samples}: ` +
    `${c.oneThreadMs.toFixed(1)} ms on one thread, ${c.allThreadsMs.toFixed(1)} ms with each of ${c.threads} threads doing the same at once); ` +
    `no backend's ${c.threads}-thread speed-up over one thread can exceed it. One thread's 128-bit multiply-then-add peak: ` +
    `${oneThreadGflops(c).toFixed(1)} GFLOP/s, the most a kernel of the plain SIMD build reaches on one thread`
  );
}
