/**
 * WebGPU end to end against its host-copy floor, in one process: a floor probe (the fastest raw
 * upload and readback paths and host memcpy, same bytes) and, for each workload at the course
 * reports' sizes (the `seed` workloads) after a warm-up, the median of `--reps` calls without
 * timing (what a caller waits for: no clock warm-up) with outputs faulted in by worker threads
 * (the default) and with plain arrays, the medians of `--reps` timed calls' kernel, upload and
 * readback, its floor (its own input bytes up through one reused mapped buffer + its output bytes
 * back into a fresh, or with `out` a reused, array: probed at those sizes) and, given
 * `--torch`, PyTorch's end to end for the same workload (benchmarks/scripts/pytorch-e2e.py).
 *
 *   node apps/studies/dist/webgpu/e2e.js --out DIR [--reps 5] [--probe-mib 256] [--torch FILE] [--only id,id]
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { median } from '@kernelkit/core';
import { CONV2D_WORKLOADS, CONV_LAYER_WORKLOADS, convLayerOutputShape, makeConv2dArgs, makeConvLayerArgs, makeScanArgs, makeStencil3dArgs, SCAN_WORKLOADS, STENCIL3D_WORKLOADS, type Backend } from '@kernelkit/ops';
import { createWebGpuBackend, type AdapterKind } from '@kernelkit/webgpu';
import { BUF, GpuDevice, MAP_READ, openAdapter, setOutputPrefault } from '@kernelkit/webgpu/testing';
import { Command, integer, machineInfo, oneOf, parseStudyArgs, writeTextFile } from '../common.js';

const argv = parseStudyArgs<{ out: string; reps: number; probeMib: number; torch?: string; only?: string; adapter: AdapterKind }>(
  new Command('e2e')
    .description('WebGPU end-to-end times at the course reports\' sizes (seed workloads) beside a host-copy floor probe (and PyTorch, given its results)')
    .requiredOption('--out <dir>', 'where webgpu-e2e.json and webgpu-e2e.md go')
    .option('--reps <n>', 'timed calls per workload after one warm-up', integer(), 5)
    .option('--probe-mib <n>', 'MiB each floor-probe transfer moves', integer(), 256)
    .option('--torch <file>', "pytorch-e2e.py's JSON, for the PyTorch column")
    .option('--only <ids>', 'comma-separated workload ids (default: all)')
    .option('--adapter <kind>', 'hardware, software or any', oneOf<AdapterKind>(['hardware', 'software', 'any']), 'hardware'),
);

const GB = 1e9;
const timeMs = async (fn: () => Promise<unknown> | unknown): Promise<number> => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};
const medianOf = async (reps: number, fn: () => Promise<unknown> | unknown): Promise<number> => {
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) xs.push(await timeMs(fn));
  return median(xs);
};

// ---- floor probe: raw Dawn paths, with one reused staging buffer of the whole size
interface Probe {
  readonly bytes: number;
  /** GB/s of each path (median of 3). */
  readonly gbps: Record<string, number>;
}

/** Touches one byte per 4 KiB page of `sab` from `workers` threads (a write fault maps each page). */
function touchInWorkers(sab: SharedArrayBuffer, workers: Worker[]): Promise<void> {
  const per = Math.ceil(sab.byteLength / 4096 / workers.length) * 4096;
  return Promise.all(
    workers.map(
      (w, i) =>
        new Promise<void>((resolve) => {
          w.once('message', () => resolve());
          w.postMessage({ sab, start: i * per, end: Math.min(sab.byteLength, (i + 1) * per) });
        }),
    ),
  ).then(() => {});
}

const TOUCH_WORKER = `const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ sab, start, end }) => { const u = new Uint8Array(sab); for (let i = start; i < end; i += 4096) u[i] = 0; parentPort.postMessage(0); });`;

async function floorProbe(adapter: AdapterKind, mib: number): Promise<Probe> {
  const bytes = mib * 2 ** 20;
  const opened = await openAdapter(adapter);
  if ('reasons' in opened) throw new Error(opened.reasons.join('; '));
  const gpu = await GpuDevice.open(opened);
  const device = gpu.device;
  const host = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i += 4096) host[i] = i & 255;
  const buf = gpu.storage(bytes);
  const gbps: Record<string, number> = {};
  const rate = (ms: number) => bytes / GB / (ms / 1000);
  const idle = () => device.queue.onSubmittedWorkDone();

  gbps['writeBuffer'] = rate(
    await medianOf(3, async () => {
      for (let o = 0; o < bytes; o += 64 << 20) device.queue.writeBuffer(buf, o, host, o, Math.min(64 << 20, bytes - o));
      await idle();
    }),
  );
  const up = device.createBuffer({ size: bytes, usage: BUF.MAP_WRITE | BUF.COPY_SRC, mappedAtCreation: true });
  up.unmap();
  await up.mapAsync(BUF.MAP_WRITE);
  gbps['staging upload, one reused buffer'] = rate(
    await medianOf(3, async () => {
      new Uint8Array(up.getMappedRange()).set(host);
      up.unmap();
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(up, 0, buf, 0, bytes);
      device.queue.submit([enc.finish()]);
      await idle();
      await up.mapAsync(BUF.MAP_WRITE);
    }),
  );
  up.destroy();
  gbps['staging upload, the executor'] = rate(await medianOf(3, () => gpu.exclusive(async () => (await gpu.write(buf, 0, host), await idle()))));

  const down = device.createBuffer({ size: bytes, usage: BUF.MAP_READ | BUF.COPY_DST });
  const rawRead = async (into: Uint8Array) => {
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(buf, 0, down, 0, bytes);
    device.queue.submit([enc.finish()]);
    await down.mapAsync(MAP_READ);
    into.set(new Uint8Array(down.getMappedRange()));
    down.unmap();
  };
  const reused = new Uint8Array(bytes);
  gbps['readback, one reused buffer, into a reused array'] = rate(await medianOf(3, () => rawRead(reused)));
  gbps['readback, one reused buffer, into a fresh array'] = rate(await medianOf(3, () => rawRead(new Uint8Array(bytes))));
  down.destroy();
  gbps['readback, the executor, into a reused array'] = rate(await medianOf(3, () => gpu.exclusive(() => gpu.read(buf, 0, bytes, reused))));
  gbps['readback, the executor, into a fresh array'] = rate(await medianOf(3, () => gpu.exclusive(() => gpu.read(buf, 0, bytes, new Uint8Array(bytes)))));

  // Other ring shapes than the default (4 × 32 MiB on hardware), for choosing it.
  for (const [slices, mibs] of [[4, 64], [8, 16], [2, 64]] as const) {
    await gpu.setStaging({ slices, sliceBytes: mibs << 20 });
    gbps[`staging upload, the executor, ${slices} × ${mibs} MiB`] = rate(await medianOf(3, () => gpu.exclusive(async () => (await gpu.write(buf, 0, host), await idle()))));
    gbps[`readback, the executor, ${slices} × ${mibs} MiB, into a reused array`] = rate(await medianOf(3, () => gpu.exclusive(() => gpu.read(buf, 0, bytes, reused))));
  }

  // What cuts the page faults of a fresh output: touching its pages first, on this thread or others.
  gbps['host memcpy, reused destination'] = rate(await medianOf(3, () => reused.set(host)));
  gbps['host memcpy, fresh destination'] = rate(await medianOf(3, () => new Uint8Array(bytes).set(host)));
  gbps['host memcpy, fresh destination touched first (same thread)'] = rate(
    await medianOf(3, () => {
      const d = new Uint8Array(bytes);
      for (let i = 0; i < bytes; i += 4096) d[i] = 0;
      d.set(host);
    }),
  );
  for (const n of [4, 8]) {
    const workers = Array.from({ length: n }, () => new Worker(TOUCH_WORKER, { eval: true }));
    gbps[`fresh shared memory touched by ${n} workers (touch only)`] = rate(await medianOf(3, () => touchInWorkers(new SharedArrayBuffer(bytes), workers)));
    gbps[`host memcpy, fresh shared destination touched by ${n} workers first`] = rate(
      await medianOf(3, async () => {
        const sab = new SharedArrayBuffer(bytes);
        await touchInWorkers(sab, workers);
        new Uint8Array(sab).set(host);
      }),
    );
    await Promise.all(workers.map((w) => w.terminate()));
  }
  gpu.release(buf);
  gpu.destroy();
  return { bytes, gbps };
}

// ---- the floor of each workload, probed at its own byte counts
/** ms to move `bytes` each way through one reused mapped buffer (pieces of the device's largest buffer), median of 3: what the floor of a call of those bytes is made of. */
interface SizedProbe {
  readonly uploadMs: number;
  readonly readbackReusedMs: number;
  readonly readbackFreshMs: number;
}

async function sizedProbes(adapter: AdapterKind, sizes: readonly number[]): Promise<Map<number, SizedProbe>> {
  const opened = await openAdapter(adapter);
  if ('reasons' in opened) throw new Error(opened.reasons.join('; '));
  const gpu = await GpuDevice.open(opened);
  const device = gpu.device;
  const found = new Map<number, SizedProbe>();
  try {
    for (const bytes of [...new Set(sizes)]) {
      const piece = Math.floor(Math.min(bytes, gpu.limits.bufferSize) / 4) * 4;
      const host = new Uint8Array(bytes);
      for (let i = 0; i < bytes; i += 4096) host[i] = i & 255;
      const reused = new Uint8Array(bytes).fill(1);
      const dev = gpu.storage(piece);
      const up = device.createBuffer({ size: piece, usage: BUF.MAP_WRITE | BUF.COPY_SRC, mappedAtCreation: true });
      const down = device.createBuffer({ size: piece, usage: BUF.MAP_READ | BUF.COPY_DST });
      try {
        up.unmap();
        await up.mapAsync(BUF.MAP_WRITE);
        const uploadMs = await medianOf(3, async () => {
          for (let o = 0; o < bytes; o += piece) {
            const len = Math.min(piece, bytes - o);
            new Uint8Array(up.getMappedRange(), 0, len).set(host.subarray(o, o + len));
            up.unmap();
            const enc = device.createCommandEncoder();
            enc.copyBufferToBuffer(up, 0, dev, 0, Math.ceil(len / 4) * 4);
            device.queue.submit([enc.finish()]);
            await up.mapAsync(BUF.MAP_WRITE);
          }
        });
        const read = async (into: Uint8Array) => {
          for (let o = 0; o < bytes; o += piece) {
            const len = Math.min(piece, bytes - o);
            const enc = device.createCommandEncoder();
            enc.copyBufferToBuffer(dev, 0, down, 0, Math.ceil(len / 4) * 4);
            device.queue.submit([enc.finish()]);
            await down.mapAsync(MAP_READ);
            into.set(new Uint8Array(down.getMappedRange(), 0, len), o);
            down.unmap();
          }
        };
        const readbackReusedMs = await medianOf(3, () => read(reused));
        const readbackFreshMs = await medianOf(3, () => read(new Uint8Array(bytes)));
        found.set(bytes, { uploadMs, readbackReusedMs, readbackFreshMs });
        console.log(JSON.stringify({ bytes, uploadMs, readbackReusedMs, readbackFreshMs }));
      } finally {
        up.destroy();
        down.destroy();
        gpu.release(dev);
      }
    }
  } finally {
    gpu.destroy();
  }
  return found;
}

// ---- end to end
interface Workload {
  readonly id: string;
  readonly label: string;
  readonly inBytes: number;
  readonly outBytes: number;
  /** Whether the call writes into a reused `out` (its floor then uses the reused-array readback). */
  readonly withOut: boolean;
  readonly run: (b: Backend, timing: boolean) => Promise<{ timing?: { totalMs: number; kernelMs?: number; uploadMs?: number; readbackMs?: number } }>;
}

/** What one workload needs once its input is made: the call, with a reused `out` or without, and a maker of that `out`. */
interface Made {
  readonly call: (b: Backend, timing: boolean, out: ArrayBufferView | undefined) => ReturnType<Workload['run']>;
  readonly out: () => ArrayBufferView;
}

/** The course reports' workloads (`seed`) named in `only` (all without it), each fresh and into a reused `out`; inputs are made only for those. */
function workloads(only: readonly string[] | undefined): Workload[] {
  const list: Workload[] = [];
  const wanted = (id: string) => only === undefined || only.includes(id);
  // `base` and `${base}-out`, where wanted, share one input, made only then.
  const pair = (base: string, label: string, inBytes: number, outBytes: number, make: () => Made) => {
    const modes = [false, true].filter((withOut) => wanted(withOut ? `${base}-out` : base));
    if (modes.length === 0) return;
    const made = make();
    for (const withOut of modes) {
      const out = withOut ? made.out() : undefined;
      list.push({ id: withOut ? `${base}-out` : base, label: withOut ? `${label}, into out` : label, inBytes, outBytes, withOut, run: (b, timing) => made.call(b, timing, out) });
    }
  };
  const opts = (timing: boolean, out: ArrayBufferView | undefined) => ({ timing, ...(out ? { out: out as never } : {}) });
  for (const id of ['conv2d-16x2048-k11', 'conv2d-1x8192-k5']) {
    const w = CONV2D_WORKLOADS.seed.find((c) => c.id === id)!;
    const n = w.batch * w.height * w.width;
    pair(id, `conv2d ${w.label}`, n * 4, n * 4, () => {
      const args = makeConv2dArgs(w);
      return { call: (b, timing, out) => b.conv2d(args, opts(timing, out)), out: () => new Float32Array(n) };
    });
  }
  const st = STENCIL3D_WORKLOADS.seed.find((c) => c.id === 'stencil-512-s10')!;
  pair(st.id, `stencil3d ${st.label}`, st.n ** 3 * 4, st.n ** 3 * 4, () => {
    const args = makeStencil3dArgs(st);
    return { call: (b, timing, out) => b.stencil3d(args, opts(timing, out)), out: () => new Float32Array(st.n ** 3) };
  });
  for (const id of ['scan-40M-u32', 'scan-400M-f32']) {
    const w = SCAN_WORKLOADS.seed.find((c) => c.id === id)!;
    pair(id, `scan ${w.label}`, w.n * 4, w.n * 4, () => {
      const args = makeScanArgs(w);
      return { call: (b, timing, out) => b.scan(args, opts(timing, out)), out: () => new (args.input.constructor as Float32ArrayConstructor)(w.n) };
    });
  }
  for (const id of ['convlayer-L1-b10000', 'convlayer-L2-b10000']) {
    const w = CONV_LAYER_WORKLOADS.seed.find((c) => c.id === id)!;
    const o = convLayerOutputShape(w);
    const outLength = w.batch * w.maps * o.outHeight * o.outWidth;
    pair(id, `convLayer ${w.label}`, w.batch * w.channels * w.height * w.width * 4, outLength * 4, () => {
      const args = makeConvLayerArgs(w);
      return { call: (b, timing, out) => b.convLayer(args, opts(timing, out)), out: () => new Float32Array(outLength) };
    });
  }
  return list;
}

interface Row {
  readonly id: string;
  readonly label: string;
  readonly inBytes: number;
  readonly outBytes: number;
  readonly endToEndMs: number;
  /** The same calls with plain output arrays (no worker prefault); undefined where the call writes into `out`. */
  readonly plainOutputMs: number | undefined;
  readonly kernelMs: number | undefined;
  readonly uploadMs: number | undefined;
  readonly readbackMs: number | undefined;
  readonly floorMs: number;
  readonly overFloor: number;
  /** The floor at the speeds of the fixed-size probe (`--probe-mib`). */
  readonly probeFloorMs: number;
  readonly torchMs: number | undefined;
  readonly runsMs: readonly number[];
}

const probe = await floorProbe(argv.adapter, argv.probeMib);
console.log(JSON.stringify(probe, null, 1));
const stagingGBps = probe.gbps['staging upload, one reused buffer']!;
const freshGBps = probe.gbps['readback, one reused buffer, into a fresh array']!;
const reusedGBps = probe.gbps['readback, one reused buffer, into a reused array']!;
const torch: Record<string, { endToEndMs: number } | undefined> = argv.torch !== undefined && existsSync(argv.torch) ? JSON.parse(readFileSync(argv.torch, 'utf8')).rows : {};

const only = argv.only?.split(',');
const list = workloads(only);
const sized = await sizedProbes(argv.adapter, list.flatMap((w) => [w.inBytes, w.outBytes]));
const backend = await createWebGpuBackend({ adapter: argv.adapter });
const rows: Row[] = [];
for (const w of list) {
  await w.run(backend, true); // warm-up: pipelines, the auto sweep, staging slices, the touch workers
  const untimed = async (): Promise<number[]> => {
    const xs: number[] = [];
    for (let i = 0; i < argv.reps; i++) xs.push(await timeMs(() => w.run(backend, false)));
    return xs;
  };
  const wall = await untimed();
  let plain: number[] | undefined;
  if (!w.withOut) {
    setOutputPrefault(backend, false);
    plain = await untimed();
    setOutputPrefault(backend, true);
  }
  const runs: { totalMs: number; kernelMs?: number; uploadMs?: number; readbackMs?: number }[] = [];
  for (let i = 0; i < argv.reps; i++) {
    const r = await w.run(backend, true);
    runs.push({ totalMs: 0, ...r.timing });
  }
  const med = (k: 'totalMs' | 'kernelMs' | 'uploadMs' | 'readbackMs') => {
    const xs = runs.map((r) => r[k]).filter((v): v is number => v !== undefined);
    return xs.length === 0 ? undefined : median(xs);
  };
  const floorIn = sized.get(w.inBytes)!;
  const floorOut = sized.get(w.outBytes)!;
  const floorMs = floorIn.uploadMs + (w.withOut ? floorOut.readbackReusedMs : floorOut.readbackFreshMs);
  // The same floor at the fixed-size probe's speeds, as earlier reports computed it.
  const probeFloorMs = (w.inBytes / GB / stagingGBps + w.outBytes / GB / (w.withOut ? reusedGBps : freshGBps)) * 1000;
  const endToEndMs = median(wall);
  const row: Row = {
    id: w.id,
    label: w.label,
    inBytes: w.inBytes,
    outBytes: w.outBytes,
    endToEndMs,
    plainOutputMs: plain === undefined ? undefined : median(plain),
    kernelMs: med('kernelMs'),
    uploadMs: med('uploadMs'),
    readbackMs: med('readbackMs'),
    floorMs,
    overFloor: endToEndMs / floorMs,
    probeFloorMs,
    torchMs: (torch[w.id] ?? torch[w.id.replace(/-out$/, '')])?.endToEndMs,
    runsMs: wall,
  };
  rows.push(row);
  console.log(JSON.stringify(row));
}
await backend.dispose();

const f = (v: number | undefined, d = 1) => (v === undefined ? '–' : v.toFixed(d));
const md = [
  `# WebGPU end to end vs the host-copy floor (${backend.info.description})`,
  '',
  `End to end: median of ${argv.reps} calls without timing after a warm-up, through createWebGpuBackend, outputs faulted in by worker threads (the default on hardware); "plain outputs" the same calls with plain arrays. Kernel, upload and readback: medians of ${argv.reps} more calls with timing on (which adds the clock warm-up before each pass). Floor: the time to move the call's own input bytes up through one reused mapped buffer (one host copy and one GPU copy per piece of the device's largest buffer) plus its output bytes back into a fresh array (into a reused array where the call is given \`out\`), each the median of 3, probed in the same process before the calls; "fixed-probe floor": the same bytes at the speeds of the ${argv.probeMib} MiB probe below.`,
  '',
  '| workload | end to end ms | plain outputs ms | kernel ms | upload ms | readback ms | floor ms | × floor | fixed-probe floor ms | PyTorch ms |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.label} | ${f(r.endToEndMs)} | ${f(r.plainOutputMs)} | ${f(r.kernelMs, 2)} | ${f(r.uploadMs)} | ${f(r.readbackMs)} | ${f(r.floorMs)} | ${f(r.overFloor, 2)} | ${f(r.probeFloorMs)} | ${f(r.torchMs)} |`),
  '',
  `## Floor probe (${argv.probeMib} MiB each)`,
  '',
  '| path | GB/s |',
  '|---|---|',
  ...Object.entries(probe.gbps).map(([k, v]) => `| ${k} | ${v.toFixed(2)} |`),
  '',
];
await writeTextFile(join(argv.out, 'webgpu-e2e.md'), md.join('\n'));
await writeTextFile(join(argv.out, 'webgpu-e2e.json'), JSON.stringify({ machine: machineInfo(), adapter: backend.info.adapter, reps: argv.reps, probe, rows }, null, 2));
console.log(md.join('\n'));
