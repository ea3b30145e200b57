/**
 * Where one WebGPU end-to-end call spends its wall time, event by event: the Dawn calls the runtime
 * makes (mapAsync from request to resolve, getMappedRange, unmap, queue.submit) and every host copy
 * of 1 MiB or more (TypedArray.prototype.set), each stamped in ms from the call's start. The
 * prototypes are wrapped from here, so the library runs unchanged.
 *
 * Then, for the router's question (issue #16), the same call's wall time, page faults and context
 * switches alone, beside an idle Piscina pool, after Piscina and cpu calls, and after disposing them.
 *
 *   node apps/studies/dist/webgpu/timeline.js --out DIR [--workload seed|small] [--reps 3] [--only ids] [--mix] [--memcpy]
 */
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { median } from '@kernelkit/core';
import { createCpuBackend } from '@kernelkit/cpu';
import { CONV2D_WORKLOADS, CONV_LAYER_WORKLOADS, convLayerOutputShape, makeConv2dArgs, makeConvLayerArgs, makeScanArgs, makeStencil3dArgs, SCAN_WORKLOADS, STENCIL3D_WORKLOADS, type Backend } from '@kernelkit/ops';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { BUF, gpuDeviceOf, MAP_READ, setFreshOutputLanding, setUploadLanding } from '@kernelkit/webgpu/testing';
import { Command, integer, machineInfo, oneOf, parseStudyArgs, writeTextFile } from '../common.js';

const argv = parseStudyArgs<{ out: string; reps: number; only: string; mix: boolean; memcpy: boolean; workload: 'small' | 'seed'; adapter: 'hardware' | 'software' | 'any' }>(
  new Command('timeline')
    .description('event timeline of WebGPU end-to-end calls (Dawn map/unmap/submit and large host copies), and the same call beside other backends')
    .requiredOption('--out <dir>', 'where webgpu-timeline.json and webgpu-timeline.md go')
    .option('--reps <n>', 'traced calls per case after one warm-up', integer(), 3)
    .option('--only <ids>', 'cases: conv2d, conv2d-out, conv2d-out-upload-landing, conv2d-fresh-landing, scan, scan-out, scan-large-out, convlayer-out, stencil-small', 'conv2d,conv2d-out,conv2d-out-upload-landing,conv2d-fresh-landing,scan,scan-out')
    .option('--memcpy', 'also time host copies into and out of mapped buffers of several sizes, apart from the GPU copies', false)
    .option('--workload <name>', 'small or seed (the course reports\' sizes)', oneOf<'small' | 'seed'>(['small', 'seed']), 'seed')
    .option('--adapter <kind>', 'hardware, software or any', oneOf<'hardware' | 'software' | 'any'>(['hardware', 'software', 'any']), 'hardware')
    .option('--mix', 'also time the call alone, beside Piscina and cpu, and after disposing them', false),
);

interface Event {
  readonly what: string;
  readonly t0: number;
  readonly t1: number;
  readonly bytes?: number;
}

let origin = 0;
let events: Event[] | undefined;
const now = (): number => performance.now() - origin;
const log = (e: Event): void => void events?.push(e);

interface WrapOptions {
  /** The bytes a call moves, logged with it. */
  readonly bytesOf?: (self: unknown, args: unknown[]) => number | undefined;
  /** Calls moving fewer bytes are not logged. */
  readonly minBytes?: number;
  /** Synchronous calls shorter than this are not logged (async ones always are). */
  readonly minSyncMs?: number;
}

/** Wraps `name` on `proto` so each call is logged; async results are logged when they settle. */
function wrap(proto: object, name: string, label: string, o: WrapOptions = {}): void {
  const original = (proto as Record<string, unknown>)[name] as (...a: unknown[]) => unknown;
  Object.defineProperty(proto, name, {
    configurable: true,
    writable: true,
    value: function (this: unknown, ...args: unknown[]) {
      const bytes = events === undefined ? undefined : o.bytesOf?.(this, args);
      if (events === undefined || (bytes !== undefined && bytes < (o.minBytes ?? 0))) return original.apply(this, args);
      const sized = bytes === undefined ? {} : { bytes };
      const t0 = now();
      const r = original.apply(this, args);
      if (r instanceof Promise) return r.finally(() => log({ what: label, t0, t1: now(), ...sized }));
      const t1 = now();
      if (t1 - t0 >= (o.minSyncMs ?? 0)) log({ what: label, t0, t1, ...sized });
      return r;
    },
  });
}

/** Async calls are always logged; synchronous ones taking at least this long too (the rest are noise). */
const SYNC_LOG_MS = 0.05;

/** Wraps every method of `proto` (a Dawn class) except those named in `skip`. */
function wrapAll(proto: object, className: string, skip: readonly string[]): void {
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (name === 'constructor' || skip.includes(name)) continue;
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (d === undefined || typeof d.value !== 'function') continue;
    wrap(proto, name, `${className}.${name}`, { minSyncMs: SYNC_LOG_MS });
  }
}

function instrument(device: GPUDevice): void {
  const probe = device.createBuffer({ size: 4, usage: MAP_READ | BUF.COPY_DST });
  const bufferProto = Object.getPrototypeOf(probe) as object;
  probe.destroy();
  const sizeOf = (self: unknown, args: unknown[]): number => (typeof args[2] === 'number' ? args[2] : (self as GPUBuffer).size);
  wrap(bufferProto, 'mapAsync', 'mapAsync', { bytesOf: sizeOf });
  wrap(bufferProto, 'getMappedRange', 'getMappedRange', { bytesOf: (self, args) => (typeof args[1] === 'number' ? args[1] : (self as GPUBuffer).size) });
  wrap(bufferProto, 'unmap', 'unmap', { bytesOf: (self) => (self as GPUBuffer).size });
  wrap(Object.getPrototypeOf(device.queue) as object, 'submit', 'submit');
  wrap(Object.getPrototypeOf(device.queue) as object, 'onSubmittedWorkDone', 'onSubmittedWorkDone');
  const bufferSize = { bytesOf: (_self: unknown, args: unknown[]) => (args[0] as GPUBufferDescriptor).size };
  wrap(Object.getPrototypeOf(device) as object, 'createBuffer', 'createBuffer', bufferSize);
  // The runtime's buffer ledger replaces createBuffer on the device object itself, bound to the
  // original: wrapped there too, or the buffers it creates would not show.
  if (Object.prototype.hasOwnProperty.call(device, 'createBuffer')) wrap(device, 'createBuffer', 'createBuffer', bufferSize);
  // Everything else the runtime calls on the device, its queue, buffers and encoders, by class.
  wrapAll(Object.getPrototypeOf(device) as object, 'device', ['createBuffer']);
  wrapAll(Object.getPrototypeOf(device.queue) as object, 'queue', ['submit', 'onSubmittedWorkDone']);
  wrapAll(bufferProto, 'buffer', ['mapAsync', 'getMappedRange', 'unmap']);
  const enc = device.createCommandEncoder();
  wrapAll(Object.getPrototypeOf(enc) as object, 'encoder', []);
  const pass = enc.beginComputePass();
  wrapAll(Object.getPrototypeOf(pass) as object, 'pass', []);
  pass.end();
  enc.finish();
  const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype) as object;
  wrap(typedArrayProto, 'set', 'host copy', { bytesOf: (_self, args) => (args[0] as ArrayBufferView).byteLength, minBytes: 1 << 20 });
}

interface Case {
  readonly id: string;
  readonly run: (b: Backend) => Promise<unknown>;
}

function cases(): Case[] {
  const conv = CONV2D_WORKLOADS[argv.workload][0]!;
  const convArgs = makeConv2dArgs(conv);
  const convOut = new Float32Array(convArgs.input.length);
  const scan = SCAN_WORKLOADS[argv.workload].find((w) => w.dtype === 'u32')!;
  const scanArgs = makeScanArgs(scan);
  const scanOut = new Uint32Array(scanArgs.input.length);
  const layer = CONV_LAYER_WORKLOADS[argv.workload].filter((w) => w.id.startsWith('convlayer-L1')).at(-1)!;
  const layerArgs = makeConvLayerArgs(layer);
  const o = convLayerOutputShape(layer);
  const layerOut = new Float32Array(layer.batch * layer.maps * o.outHeight * o.outWidth);
  const bigScan = SCAN_WORKLOADS[argv.workload].at(-1)!;
  const bigScanArgs = makeScanArgs(bigScan);
  const bigScanOut = new Float32Array(bigScanArgs.input.length);
  const stencil = STENCIL3D_WORKLOADS[argv.workload][0]!;
  const stencilArgs = makeStencil3dArgs(stencil);
  const all: Case[] = [
    { id: 'stencil-small', run: (b) => b.stencil3d(stencilArgs) },
    { id: 'scan-large-out', run: (b) => b.scan(bigScanArgs, { out: bigScanOut as never }) },
    { id: 'convlayer-out', run: (b) => b.convLayer(layerArgs, { out: layerOut }) },
    { id: 'conv2d', run: (b) => b.conv2d(convArgs) },
    { id: 'conv2d-out', run: (b) => b.conv2d(convArgs, { out: convOut }) },
    { id: 'conv2d-out-upload-landing', run: (b) => (setUploadLanding(b, true), b.conv2d(convArgs, { out: convOut }).finally(() => setUploadLanding(b, undefined))) },
    { id: 'conv2d-fresh-landing', run: (b) => (setFreshOutputLanding(b, true), b.conv2d(convArgs).finally(() => setFreshOutputLanding(b, false))) },
    { id: 'scan', run: (b) => b.scan(scanArgs) },
    { id: 'scan-out', run: (b) => b.scan(scanArgs, { out: scanOut as never }) },
  ];
  const wanted = new Set(argv.only.split(','));
  return all.filter((c) => wanted.has(c.id));
}

/** Sums per event kind, and the gaps: wall time with no logged event under way. */
function summarize(evs: readonly Event[], total: number): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const e of evs) sums[e.what] = (sums[e.what] ?? 0) + (e.t1 - e.t0);
  const spans = [...evs].sort((a, b) => a.t0 - b.t0);
  let covered = 0;
  let end = 0;
  for (const e of spans) {
    if (e.t1 <= end) continue;
    covered += e.t1 - Math.max(e.t0, end);
    end = e.t1;
  }
  sums['(no event under way)'] = total - covered;
  return sums;
}

const round = (x: number): number => Math.round(x * 1000) / 1000;

const webgpu = await createWebGpuBackend({ adapter: argv.adapter });
const list = cases();
// Opens the device and compiles every pipeline before anything is traced.
for (const c of list) await c.run(webgpu);
instrument(gpuDeviceOf(webgpu).device);

const traces: { id: string; rep: number; totalMs: number; sums: Record<string, number>; events: Event[] }[] = [];
for (const c of list) {
  await c.run(webgpu);
  for (let rep = 0; rep < argv.reps; rep++) {
    events = [];
    origin = performance.now();
    await c.run(webgpu);
    const totalMs = performance.now() - origin;
    const evs = events;
    events = undefined;
    traces.push({ id: c.id, rep, totalMs: round(totalMs), sums: Object.fromEntries(Object.entries(summarize(evs, totalMs)).map(([k, v]) => [k, round(v)])), events: evs.map((e) => ({ ...e, t0: round(e.t0), t1: round(e.t1) })) });
    console.log(JSON.stringify({ id: c.id, rep, totalMs: round(totalMs), sums: traces.at(-1)!.sums }));
  }
}

// ---- the same call beside other backends
interface MixRow {
  readonly phase: string;
  readonly id: string;
  readonly medianMs: number;
  readonly minorFaults: number;
  readonly voluntarySwitches: number;
  readonly involuntarySwitches: number;
  readonly userMs: number;
  readonly systemMs: number;
  readonly gcMs: number;
}
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });
const mix: MixRow[] = [];
async function timeMix(phase: string): Promise<void> {
  for (const c of list) {
    await c.run(webgpu);
    const ms: number[] = [];
    const u0 = process.resourceUsage();
    const gc0 = gcMs;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await c.run(webgpu);
      ms.push(performance.now() - t0);
    }
    const u1 = process.resourceUsage();
    // GC entries arrive on a later tick.
    await new Promise((r) => setImmediate(r));
    const per = (a: number, b: number): number => round((b - a) / 5);
    mix.push({
      phase,
      id: c.id,
      medianMs: round(median(ms)),
      minorFaults: per(u0.minorPageFault, u1.minorPageFault),
      voluntarySwitches: per(u0.voluntaryContextSwitches, u1.voluntaryContextSwitches),
      involuntarySwitches: per(u0.involuntaryContextSwitches, u1.involuntaryContextSwitches),
      userMs: per(u0.userCPUTime / 1000, u1.userCPUTime / 1000),
      systemMs: per(u0.systemCPUTime / 1000, u1.systemCPUTime / 1000),
      gcMs: per(gc0, gcMs),
    });
    console.log(JSON.stringify(mix.at(-1)));
  }
}
if (argv.mix) {
  await timeMix('alone');
  const piscina = await createPiscinaBackend();
  const cpu = createCpuBackend();
  await piscina.conv2d(makeConv2dArgs(CONV2D_WORKLOADS.small[0]!));
  await timeMix('beside an idle Piscina pool (one small call made)');
  for (const c of list) {
    for (let i = 0; i < 3; i++) {
      await c.run(piscina);
      await c.run(cpu);
    }
  }
  await timeMix('after 3 Piscina and 3 cpu calls of each case');
  await piscina.dispose();
  await cpu.dispose();
  await timeMix('after disposing Piscina and cpu');
}
// ---- host copies into and out of mapped staging memory, apart from the GPU's copies
interface CopyRow {
  readonly path: string;
  readonly memcpyGBps: number;
  readonly gpuCopyGBps: number;
}
const copies: CopyRow[] = [];
if (argv.memcpy) {
  const device = gpuDeviceOf(webgpu).device;
  const total = 256 << 20;
  const host = new Uint8Array(total);
  for (let i = 0; i < total; i += 4096) host[i] = i & 255;
  const reused = new Uint8Array(total).fill(1);
  const storage = device.createBuffer({ size: total, usage: BUF.STORAGE | BUF.COPY_DST | BUF.COPY_SRC });
  const gbps = (ms: number): number => round(total / 1e9 / (ms / 1000));
  // Every shape is timed in each round, round-robin, so a slow phase of the machine hits all alike.
  const piece = 32 << 20;
  const pieces = total / piece;
  const bigUp = device.createBuffer({ size: total, usage: BUF.MAP_WRITE | BUF.COPY_SRC, mappedAtCreation: true });
  const bigDown = device.createBuffer({ size: total, usage: MAP_READ | BUF.COPY_DST });
  const smallUps = Array.from({ length: pieces }, () => device.createBuffer({ size: piece, usage: BUF.MAP_WRITE | BUF.COPY_SRC, mappedAtCreation: true }));
  const smallDowns = Array.from({ length: pieces }, () => device.createBuffer({ size: piece, usage: MAP_READ | BUF.COPY_DST }));
  const fill = async (bufs: GPUBuffer[], down: boolean): Promise<void> => {
    const enc = device.createCommandEncoder();
    bufs.forEach((b, i) => (down ? enc.copyBufferToBuffer(storage, i * b.size, b, 0, b.size) : undefined));
    device.queue.submit([enc.finish()]);
    await Promise.all(bufs.map((b) => b.mapAsync(down ? MAP_READ : BUF.MAP_WRITE)));
  };
  const shapes: { path: string; bufs: GPUBuffer[]; down: boolean; copy: (bufs: GPUBuffer[]) => void }[] = [
    { path: 'one 256 MiB MAP_WRITE buffer, one host copy into it', bufs: [bigUp], down: false, copy: ([b]) => new Uint8Array(b!.getMappedRange()).set(host) },
    { path: 'one 256 MiB MAP_WRITE buffer, 8 host copies of 32 MiB', bufs: [bigUp], down: false, copy: ([b]) => { const r = new Uint8Array(b!.getMappedRange()); for (let o = 0; o < total; o += piece) r.set(host.subarray(o, o + piece), o); } },
    { path: '8 MAP_WRITE buffers of 32 MiB, a host copy into each', bufs: smallUps, down: false, copy: (bs) => bs.forEach((b, i) => new Uint8Array(b.getMappedRange()).set(host.subarray(i * piece, (i + 1) * piece))) },
    { path: 'one 256 MiB MAP_READ buffer, one host copy out of it', bufs: [bigDown], down: true, copy: ([b]) => reused.set(new Uint8Array(b!.getMappedRange())) },
    { path: 'one 256 MiB MAP_READ buffer, 8 host copies of 32 MiB', bufs: [bigDown], down: true, copy: ([b]) => { const r = new Uint8Array(b!.getMappedRange()); for (let o = 0; o < total; o += piece) reused.set(r.subarray(o, o + piece), o); } },
    { path: '8 MAP_READ buffers of 32 MiB, a host copy out of each', bufs: smallDowns, down: true, copy: (bs) => bs.forEach((b, i) => reused.set(new Uint8Array(b.getMappedRange()), i * piece)) },
  ];
  bigUp.unmap();
  for (const b of smallUps) b.unmap();
  const times = shapes.map(() => [] as number[]);
  for (let rep = 0; rep < 6; rep++) {
    for (const [k, sh] of shapes.entries()) {
      await fill(sh.bufs, sh.down);
      const t0 = performance.now();
      sh.copy(sh.bufs);
      times[k]!.push(performance.now() - t0);
      for (const b of sh.bufs) b.unmap();
    }
  }
  shapes.forEach((sh, k) => copies.push({ path: sh.path, memcpyGBps: gbps(median(times[k]!.slice(1))), gpuCopyGBps: 0 }));
  for (const b of [bigUp, bigDown, ...smallUps, ...smallDowns]) b.destroy();
  const plain: number[] = [];
  for (let rep = 0; rep < 4; rep++) {
    const t0 = performance.now();
    reused.set(host);
    plain.push(performance.now() - t0);
  }
  copies.push({ path: 'host memcpy into a reused array (no GPU memory)', memcpyGBps: gbps(median(plain.slice(1))), gpuCopyGBps: 0 });
  storage.destroy();
}
await webgpu.dispose();

const md = [
  `# WebGPU call timelines (${webgpu.info.adapter?.description ?? 'adapter'})`,
  '',
  `${machineInfo().cpu}; Node ${process.version}; ${new Date().toISOString()}.`,
  '',
  'Per traced call: wall ms, and ms summed per kind of event (overlapping events each count; "(no event under way)" is wall time no logged event covers: JavaScript between calls, awaiting promises that are not maps, the kernel).',
  '',
  '| case | rep | wall ms | ' + ['mapAsync', 'getMappedRange', 'unmap', 'submit', 'onSubmittedWorkDone', 'createBuffer', 'host copy', '(no event under way)'].join(' | ') + ' |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
  ...traces.map((t) => `| ${t.id} | ${t.rep} | ${t.totalMs.toFixed(1)} | ${['mapAsync', 'getMappedRange', 'unmap', 'submit', 'onSubmittedWorkDone', 'createBuffer', 'host copy', '(no event under way)'].map((k) => (t.sums[k] ?? 0).toFixed(1)).join(' | ')} |`),
  '',
  ...(copies.length
    ? [
        'Host copies of 256 MiB into (upload) and out of (readback) mapped buffers, by buffer shape and host-copy size, timed apart from the GPU copies, every shape once per round (round-robin); median of 5 rounds after one.',
        '',
        '| path | host copy GB/s |',
        '|---|---|',
        ...copies.map((c) => `| ${c.path} | ${c.memcpyGBps.toFixed(2)} |`),
        '',
      ]
    : []),
  ...(mix.length
    ? [
        'The same calls (median of 5, no tracing), per call: minor page faults, context switches, CPU ms, V8 GC pause ms, by what else the process holds.',
        '',
        '| phase | case | median ms | minor faults | voluntary switches | involuntary switches | user ms | system ms | GC ms |',
        '|---|---|---|---|---|---|---|---|---|',
        ...mix.map((m) => `| ${m.phase} | ${m.id} | ${m.medianMs.toFixed(1)} | ${m.minorFaults} | ${m.voluntarySwitches} | ${m.involuntarySwitches} | ${m.userMs.toFixed(1)} | ${m.systemMs.toFixed(1)} | ${m.gcMs.toFixed(1)} |`),
      ]
    : []),
];
await writeTextFile(join(argv.out, 'webgpu-timeline.md'), md.join('\n'));
await writeTextFile(join(argv.out, 'webgpu-timeline.json'), JSON.stringify({ machine: machineInfo(), adapter: webgpu.info.adapter, traces, mix, copies }, null, 2));
