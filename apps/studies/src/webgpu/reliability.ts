/**
 * Reliability run for a GPU host (no vitest there: it uses `@kernelkit/ops/testing/data`):
 *   node apps/studies/dist/webgpu/reliability.js --out file.json [--cycles N] [--adapter hardware|software]
 * Runs the shared bad-input table, 64 concurrent mixed calls, N create → run → dispose cycles
 * (live GPUBuffers and RSS sampled) and the device-loss scenario, on the hardware adapter by
 * default. Writes a JSON summary (cases tried and passed, failures with messages, timings) and
 * exits 1 on any failure, 2 on bad usage.
 */
import { DeviceError, InvalidArgumentError, errorMessage } from '@kernelkit/core';
import type { Backend, OpArgs, OpData, OpName } from '@kernelkit/ops';
import { createWebGpuBackend, type AdapterKind } from '@kernelkit/webgpu';
import { dispatchOversized, failNextDeviceRecreation, liveGpuBuffers, loseDevice, webgpuStats } from '@kernelkit/webgpu/testing';
import { checkResult, Command, integer, oneOf, parseStudyArgs, writeTextFile } from '../common.js';
import { BAD_INPUT_CASES, conv2dCase, convLayerCase, gcFunction, GRID_CASES, randomGridCase, refusalProblem, scanCase, stencilCase } from '@kernelkit/ops/testing/data';

// ---- command line ------------------------------------------------------------------------

const flags = parseStudyArgs<{ out?: string; cycles: number; adapter: 'hardware' | 'software' }>(
  new Command('reliability')
    .description('bad input, 64 concurrent calls, create → run → dispose cycles and device loss on one adapter; exits 1 on any failure')
    .option('--out <file>', 'write the JSON summary here')
    .option('--cycles <n>', 'create → run → dispose cycles', integer(0), 100)
    .option('--adapter <kind>', 'hardware or software', oneOf(['hardware', 'software'] as const), 'hardware'),
);
const cycles = flags.cycles;
const adapterKind: AdapterKind = flags.adapter;

// ---- recording ---------------------------------------------------------------------------

interface Failure {
  readonly section: string;
  readonly case: string;
  readonly message: string;
}

interface Section {
  tried: number;
  passed: number;
  ms: number;
  readonly notes: string[];
  [extra: string]: unknown;
}

const failures: Failure[] = [];
const sections: Record<string, Section> = {};

function section(name: string): Section {
  return (sections[name] ??= { tried: 0, passed: 0, ms: 0, notes: [] });
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/** Runs one case of `sectionName`; a throw is its failure, with the message recorded. */
async function runCase(sectionName: string, name: string, fn: () => Promise<void>): Promise<boolean> {
  const s = section(sectionName);
  s.tried++;
  const t0 = performance.now();
  try {
    await fn();
    s.passed++;
    return true;
  } catch (e) {
    const err = e as Error;
    failures.push({ section: sectionName, case: name, message: `${err.name}: ${err.message}`.slice(0, 2000) });
    console.error(`FAIL ${sectionName} / ${name}: ${err.message.slice(0, 300)}`);
    return false;
  } finally {
    s.ms += performance.now() - t0;
  }
}

/** Rejects when `p` has not settled after `ms`: a hang is a failure, never a stalled run. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

const rejection = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

const backendOf = (scanChunkElements?: number): Promise<Backend> =>
  createWebGpuBackend(scanChunkElements === undefined ? { adapter: adapterKind } : { adapter: adapterKind, scanChunkElements });

/** Buffers handed out to a call and never given back; 0 between calls. */
function outstanding(b: Backend): number {
  return webgpuStats(b).outBuffers;
}

type Call = (b: Backend, options?: object) => Promise<string | undefined>;
const call =
  <A extends object>(op: OpName, args: A): Call =>
  async (b, options) => {
    const res = await (b[op] as unknown as (a: A, o?: object) => Promise<{ data: never }>)(args, options);
    const msg = checkResult(op, args as OpArgs<OpName>, res.data as OpData<OpName>, { kind: 'f64' }).message;
    return msg === undefined ? undefined : `${op}: ${msg}`;
  };

// ---- sections ----------------------------------------------------------------------------

async function badInput(b: Backend): Promise<void> {
  const rows = BAD_INPUT_CASES;
  const s = section('badInput');
  s['knownGaps'] = [] as string[];
  for (const row of rows) {
    const variants = row.everyVariant === true ? b.variants(row.op) : [undefined];
    for (const variant of variants) {
      const name = `${row.op}${variant === undefined ? '' : `/${variant}`}: ${row.what}`;
      const refusal = async (): Promise<void> => {
        const problem = await within(refusalProblem(b, { ...row, parameter: row.parameter, error: row.error ?? InvalidArgumentError }, variant), 120_000, name);
        check(problem === undefined, problem ?? '');
        check(outstanding(b) === 0, `${outstanding(b)} GPU buffers left handed out`);
      };
      if (row.knownGap === undefined) {
        await runCase('badInput', name, refusal);
        continue;
      }
      // A known gap of the shared validation: expected to fail; note it if it stopped failing.
      const fixed = await refusal().then(
        () => true,
        () => false,
      );
      (s['knownGaps'] as string[]).push(`${name}: ${fixed ? 'now refused correctly: remove the knownGap marker' : row.knownGap}`);
    }
  }
  await runCase('badInput', 'the backend still answers a correct call', async () => check((await call('conv2d', conv2dCase([1, 5, 5, 3], 2))(b)) === undefined, 'wrong result'));
}

/** Call `i` of a mixed batch: every op in turn, each variant in turn, small shapes that vary. */
function mixedCall(b: Backend, i: number): { name: string; run: Call } {
  const ops: readonly OpName[] = ['conv2d', 'stencil3d', 'scan', 'gridSearch', 'convLayer'];
  const op = ops[i % ops.length]!;
  const vs = b.variants(op);
  const variant = vs[Math.floor(i / ops.length) % vs.length]!;
  const dtype = (['u32', 'i32', 'f32'] as const)[i % 3]!;
  const run =
    op === 'conv2d'
      ? call(op, conv2dCase([1 + (i % 2), 5 + (i % 4), 6 + (i % 3), [1, 3, 5][i % 3]!], i))
      : op === 'stencil3d'
        ? call(op, stencilCase([4 + (i % 3), 5, 3 + (i % 2), 1 + (i % 3), i % 2 === 0 ? 'copy' : 'zero'], i))
        : op === 'scan'
          ? call(op, scanCase(dtype, [1, 37, 300, 5000][i % 4]!, i, i % 2 === 0, dtype === 'u32' ? 4_000_000_000 : dtype === 'i32' ? -9 : 1.5))
          : op === 'gridSearch'
            ? call(op, randomGridCase(i))
            : call(op, convLayerCase([1 + (i % 2), 2, 6 + (i % 3), 5 + (i % 2), 2 + (i % 2), [1, 3][i % 2]!], i, { bias: i % 2 === 0, relu: i % 3 === 0 }));
  return { name: `#${i} ${op}/${variant}`, run: (backend) => run(backend, { variant }) };
}

async function concurrent(b: Backend, n = 64): Promise<void> {
  const jobs = Array.from({ length: n }, (_, i) => mixedCall(b, i));
  // All issued before any settles: they queue on the device and must each come back right.
  const t0 = performance.now();
  const settled = await within(Promise.allSettled(jobs.map((j) => j.run(b))), 300_000, `${n} concurrent calls`);
  section('concurrent').ms += performance.now() - t0;
  for (const [i, r] of settled.entries()) {
    await runCase('concurrent', jobs[i]!.name, async () => {
      if (r.status === 'rejected') throw r.reason;
      check(r.value === undefined, r.value ?? '');
    });
  }
  await runCase('concurrent', 'no GPU buffer left handed out afterwards', async () => check(outstanding(b) === 0, `${outstanding(b)} left`));
}

const CYCLE_CALLS: readonly Call[] = [
  call('conv2d', conv2dCase([1, 6, 5, 3], 41)),
  call('stencil3d', stencilCase([5, 4, 3, 2, 'copy'], 42)),
  call('scan', scanCase('u32', 100, 43, true, 9)),
  call('gridSearch', GRID_CASES[0]!.args),
  call('convLayer', convLayerCase([1, 2, 6, 5, 2, 3], 44, { bias: true, relu: true })),
];

/**
 * `n` × (create → one call of every op, checked → dispose). Live buffers: while alive at most
 * the most seen in the first 10 % of cycles, 0 after dispose (this backend and the process).
 * RSS (100 cycles or more): at most 64 MiB growth from the end of the first 10 % to the end. Dawn frees a device's
 * native memory only when V8 collects its wrapper, late, as it does not see that memory: a
 * full GC every 10 cycles keeps that lag out of the measure (see test/reliability.test.ts).
 */
async function lifetime(n: number): Promise<void> {
  const s = section('cycles');
  const gc = gcFunction();
  const warm = Math.max(1, Math.ceil(n / 10));
  const MiB = 2 ** 20;
  let aliveMax = 0;
  let rssWarm = 0;
  const t0 = performance.now();
  let ok = true;
  for (let c = 1; c <= n && ok; c++) {
    if (c % 10 === 0) gc?.();
    ok = await runCase('cycles', `cycle ${c}`, async () => {
      const b = await within(backendOf(), 60_000, 'create');
      let alive: number;
      try {
        for (const run of CYCLE_CALLS) {
          const msg = await within(run(b), 60_000, 'a call');
          check(msg === undefined, msg ?? '');
        }
        alive = liveGpuBuffers(b);
      } finally {
        await within(b.dispose(), 60_000, 'dispose');
      }
      check(c <= warm || alive <= aliveMax, `${alive} live GPU buffers while alive, more than the ${aliveMax} of the first ${warm} cycles`);
      aliveMax = Math.max(aliveMax, alive);
      check(liveGpuBuffers(b) === 0, `${liveGpuBuffers(b)} live GPU buffers after dispose`);
      check(liveGpuBuffers() === 0, `${liveGpuBuffers()} live GPU buffers in the process after dispose`);
      check(!webgpuStats(b).holdsInstance, 'the Dawn create() object is still held after dispose');
    });
    if (c === warm) {
      gc?.();
      rssWarm = process.memoryUsage.rss();
    }
  }
  gc?.();
  const rssEnd = process.memoryUsage.rss();
  Object.assign(s, {
    cycles: n,
    msPerCycle: n === 0 ? 0 : Math.round(((performance.now() - t0) / n) * 10) / 10,
    rssWarmMiB: Math.round(rssWarm / MiB),
    rssEndMiB: Math.round(rssEnd / MiB),
    aliveMax,
    gc: gc !== undefined,
  });
  // Over fewer cycles the first 10 % is still warm-up (driver caches fill), not a baseline.
  if (n < 100) s.notes.push(`RSS growth not checked: ${n} cycles, fewer than 100`);
  else if (ok) await runCase('cycles', `RSS growth after cycle ${warm} at most 64 MiB`, async () => check((rssEnd - rssWarm) / MiB <= 64, `RSS grew ${((rssEnd - rssWarm) / MiB).toFixed(1)} MiB`));
}

async function deviceLoss(): Promise<void> {
  const name = 'deviceLoss';
  const s = section(name);
  const b = await backendOf(2048);
  try {
    await call('scan', scanCase('u32', 10, 1))(b);
    const long = scanCase('u32', 100_000, 3);
    const conv = call('conv2d', conv2dCase([2, 9, 7, 3], 4));
    const scanArgs = scanCase('i32', 3000, 4, true, -7);
    let lost = false;
    const inFlight = rejection(b.scan(long, { onProgress: () => void (lost || loseDevice(b), (lost = true)) }));
    const queued = [conv(b), (b.scan(scanArgs) as Promise<{ data: Int32Array; notes?: readonly string[] }>)].map((p) => p.then((r) => r, (e: unknown) => e as Error));
    await runCase(name, 'a call in flight rejects with DeviceError, without hanging', async () => {
      const err = await within(inFlight, 30_000, 'the call in flight');
      check(lost, 'the loss was never triggered (no progress report)');
      check(err instanceof DeviceError && /device was lost during this call/.test(err.message), `got ${String(err)}`);
      s.notes.push(`in flight: ${(err as Error).message}`);
    });
    await runCase(name, 'calls queued behind it run on a recreated device, with a note', async () => {
      const [c, r] = await within(Promise.all(queued), 60_000, 'the queued calls');
      check(c === undefined, `conv2d: ${errorMessage(c)}`);
      check(!(r instanceof Error), `scan: ${(r as Error).message}`);
      const res = r as { data: Int32Array; notes?: readonly string[] };
      const msg = checkResult('scan', scanArgs, res.data, { kind: 'f64' }).message;
      check(msg === undefined, `scan: ${msg}`);
      check(res.notes?.some((x) => /device was lost .* and recreated/.test(x)) === true, `no recreation note: ${JSON.stringify(res.notes)}`);
      const st = webgpuStats(b);
      check(st.generation === 2 && st.usable, `generation ${st.generation}, usable ${st.usable}`);
      check(outstanding(b) === 0, `${outstanding(b)} buffers left handed out`);
      s.notes.push(`recreated: ${res.notes?.[0]}`);
    });
    await runCase(name, 'an oversized dispatch rejects with DeviceError; the device keeps working', async () => {
      const err = await within(rejection(dispatchOversized(b)), 30_000, 'the oversized dispatch');
      check(err instanceof DeviceError && /WebGPU rejected a command/.test(err.message), `got ${String(err)}`);
      const msg = await conv(b);
      check(msg === undefined, msg ?? '');
      check(webgpuStats(b).generation === 2, 'the device was recreated after a validation error');
    });
    await runCase(name, 'a loss while idle frees the lost device at once; the next call recreates', async () => {
      await within(loseDevice(b), 30_000, 'the loss');
      check(liveGpuBuffers(b) === 0, `${liveGpuBuffers(b)} buffers of the lost device still live`);
      const msg = await within(conv(b), 60_000, 'the next call');
      check(msg === undefined, msg ?? '');
      check(webgpuStats(b).generation === 3, `generation ${webgpuStats(b).generation}`);
    });
    await runCase(name, 'when recreation fails every later call rejects with DeviceError', async () => {
      await within(loseDevice(b), 30_000, 'the loss');
      failNextDeviceRecreation(b, 'simulated by the reliability run');
      for (let i = 0; i < 2; i++) {
        const err = await within(rejection(conv(b)), 30_000, 'a call on the unusable backend');
        check(err instanceof DeviceError && /could not be recreated .*unusable/.test(err.message), `got ${String(err)}`);
      }
    });
  } finally {
    await runCase(name, 'dispose works after all that and frees everything', async () => {
      await within(b.dispose(), 30_000, 'dispose');
      check(liveGpuBuffers(b) === 0 && liveGpuBuffers() === 0, `${liveGpuBuffers()} live buffers`);
      check(!webgpuStats(b).holdsInstance, 'the Dawn create() object is still held');
    });
  }
}

// ---- run ---------------------------------------------------------------------------------

const started = new Date().toISOString();
const t0 = performance.now();
let adapter: Backend['info'] | undefined;
let fatal: string | undefined;
try {
  const b = await backendOf();
  adapter = b.info;
  try {
    await badInput(b);
    await concurrent(b);
  } finally {
    await b.dispose();
  }
  await lifetime(cycles);
  await deviceLoss();
} catch (e) {
  fatal = `${(e as Error).name}: ${(e as Error).message}`;
  failures.push({ section: 'run', case: 'setup', message: fatal });
}
for (const s of Object.values(sections)) s.ms = Math.round(s.ms);
const tried = Object.values(sections).reduce((a, s) => a + s.tried, 0);
const passed = Object.values(sections).reduce((a, s) => a + s.passed, 0);
const summary = {
  started,
  adapterKind,
  description: adapter?.description,
  adapter: adapter?.adapter,
  node: process.version,
  tried,
  passed,
  failed: failures.length,
  ok: failures.length === 0,
  ms: Math.round(performance.now() - t0),
  sections,
  failures,
};
if (flags.out !== undefined) await writeTextFile(flags.out, JSON.stringify(summary, null, 2) + '\n');
console.log(
  `${summary.ok ? 'OK' : 'FAILED'}: ${passed}/${tried} cases passed in ${(summary.ms / 1000).toFixed(1)} s on ${adapter?.description ?? `no ${adapterKind} adapter`}` +
    `${fatal === undefined ? '' : ` (${fatal})`}${flags.out === undefined ? '' : `; summary in ${flags.out}`}`,
);
process.exitCode = summary.ok ? 0 : 1;
// Everything was disposed: the process must end by itself. If something keeps it alive, say so.
setTimeout(() => {
  console.error('the process did not exit by itself within 10 s of the end');
  process.exit(3);
}, 10_000).unref();
