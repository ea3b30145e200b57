/**
 * Ceiling micro-benchmarks, timed the same way as the ops (timestamps around one compute pass):
 * a 1 GiB copy (scalar and vec4, 1 and 10 dispatches per pass), an FMA-throughput kernel, and a
 * wall-clock cross-check of the timestamps. Run once per Dawn flag set so the effect of toggles
 * such as disable_robustness is measured, not guessed.
 * `node apps/studies/dist/webgpu/ceilings.js [--flags 'enable-dawn-features=a,b'] [--any] [--small] [--ramp] [--ops]`
 * (--ops also times a few real ops).
 */
import { median } from '@kernelkit/core';
import { conv2dPixels, makeConv2dArgs, makeStencil3dArgs, makeScanArgs, scanBytes, stencil3dPointUpdates, CONV2D_WORKLOADS } from '@kernelkit/ops';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { copyProgram, GpuDevice, grid1d, openAdapter, packParams, type Dispatch, type Program } from '@kernelkit/webgpu/testing';
import { Command, parseStudyArgs } from '../common.js';

const o = parseStudyArgs<{ flags?: string; any?: boolean; small?: boolean; ramp?: boolean; ops?: boolean }>(
  new Command('ceilings')
    .description('copy bandwidth, FMA throughput and clock ramp of a WebGPU adapter, timed like the ops')
    .option('--flags <flags>', "Dawn flags, space-separated (e.g. 'enable-dawn-features=a,b')")
    .option('--any', 'take any adapter, software included')
    .option('--small', '16 MiB buffers and a small FMA grid (smoke runs)')
    .option('--ramp', 'also measure the clock ramp after idle')
    .option('--ops', 'also time a few real ops'),
);
const flags = o.flags ? o.flags.split(' ') : [];

// 8 independent FMA chains × ITER per thread: compute-bound, result stored so it is not dead code.
const fma: Program = {
  name: 'fma',
  cacheKey: 'fma',
  workgroupSize: [256, 1, 1],
  wgsl: `struct P { n: u32, a: u32, b: u32, c: u32 }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3u) {
  var a0 = f32(g.x); var a1 = a0 + 1.0; var a2 = a0 + 2.0; var a3 = a0 + 3.0;
  var a4 = a0 + 4.0; var a5 = a0 + 5.0; var a6 = a0 + 6.0; var a7 = a0 + 7.0;
  let m = src[0]; let c = src[1];
  for (var k = 0u; k < p.a; k++) {
    a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
    a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
  }
  dst[g.x % 1024u] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}`,
};

async function timed(gpu: GpuDevice, ds: Dispatch[], reps = 5): Promise<{ k: number; wall: number }> {
  await gpu.execute(ds, [], true);
  const k: number[] = [];
  const w: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    const r = await gpu.execute(ds, [], true);
    w.push(performance.now() - t0);
    if (r.kernelMs !== undefined) k.push(r.kernelMs);
  }
  return { k: k.length ? median(k) : Number.NaN, wall: median(w) };
}

async function micro(): Promise<void> {
  const opened = await openAdapter(o.any ? 'any' : 'hardware', flags);
  if ('reasons' in opened) throw new Error(opened.reasons.join('; '));
  const gpu = await GpuDevice.open(opened, 0);
  console.log(`flags: ${JSON.stringify(flags)} — ${opened.info.description}`);
  const bytes = o.small === true ? 1 << 24 : 1 << 30;
  const a = gpu.storage(bytes);
  const b = gpu.storage(bytes);
  for (const [vec, wg] of [[false, 256], [true, 256], [false, 1024], [true, 64]] as const) {
    const n = bytes / (vec ? 16 : 4);
    const pipe = gpu.pipeline(copyProgram(vec, wg));
    const params = gpu.uniform(packParams([['u32', n], ['u32', 0], ['u32', 0], ['u32', 0]]));
    const d: Dispatch = { pipeline: pipe, bindGroup: gpu.bind(pipe, [a, b, params]), workgroups: grid1d(Math.ceil(n / wg)) };
    const one = await timed(gpu, [d]);
    const ten = await timed(gpu, Array<Dispatch>(10).fill(d), 3);
    console.log(`copy ${vec ? 'vec4' : 'f32 '} wg${wg}: 1×: ${one.k.toFixed(3)} ms = ${((2 * bytes) / one.k / 1e6).toFixed(0)} GB/s (wall ${one.wall.toFixed(2)} ms); 10× in one pass: ${ten.k.toFixed(3)} ms = ${((20 * bytes) / ten.k / 1e6).toFixed(0)} GB/s (wall ${ten.wall.toFixed(2)} ms)`);
  }
  // A small copy (16 MiB): per-pass fixed cost shows up here.
  {
    const n = (16 << 20) / 4;
    const pipe = gpu.pipeline(copyProgram(false, 256));
    const params = gpu.uniform(packParams([['u32', n], ['u32', 0], ['u32', 0], ['u32', 0]]));
    const d: Dispatch = { pipeline: pipe, bindGroup: gpu.bind(pipe, [a, b, params]), workgroups: grid1d(Math.ceil(n / 256)) };
    const one = await timed(gpu, [d]);
    const ten = await timed(gpu, Array<Dispatch>(10).fill(d));
    console.log(`copy 16 MiB: 1×: ${one.k.toFixed(4)} ms; 10× in one pass: ${ten.k.toFixed(4)} ms (per dispatch ${(ten.k / 10).toFixed(4)})`);
  }
  {
    const iters = 4096;
    const threads = o.small === true ? 1024 : 132 * 2048 * 4;
    const pipe = gpu.pipeline(fma);
    const params = gpu.uniform(packParams([['u32', threads], ['u32', iters], ['u32', 0], ['u32', 0]]));
    const d: Dispatch = { pipeline: pipe, bindGroup: gpu.bind(pipe, [a, b, params]), workgroups: [threads / 256, 1, 1] };
    const r = await timed(gpu, [d]);
    console.log(`fma: ${r.k.toFixed(3)} ms = ${((threads * iters * 8 * 2) / r.k / 1e9).toFixed(2)} TFLOP/s (wall ${r.wall.toFixed(2)} ms)`);
  }
  if (o.ramp) await ramp(gpu, a, b, bytes);
  gpu.release(a, b);
  gpu.destroy();
}

/**
 * Clock ramp: after 600 ms idle (as between the ops' uploads) one timed 1 GiB vec4 copy, with
 * 0…60 ms of warm-up spin in front of it. Shows how much warm-up the timed pass needs.
 */
async function ramp(gpu: GpuDevice, a: GPUBuffer, b: GPUBuffer, bytes: number): Promise<void> {
  const n = bytes / 16;
  const pipe = gpu.pipeline(copyProgram(true, 256));
  const params = gpu.uniform(packParams([['u32', n], ['u32', 0], ['u32', 0], ['u32', 0]]));
  const d: Dispatch = { pipeline: pipe, bindGroup: gpu.bind(pipe, [a, b, params]), workgroups: grid1d(Math.ceil(n / 256)) };
  for (const ms of [0, 2, 10, 25, 60]) {
    gpu.setClockWarmUp(ms);
    const ks: string[] = [];
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 600));
      ks.push((await gpu.execute([d], [], true)).kernelMs?.toFixed(4) ?? '—');
    }
    console.log(`ramp: idle 600 ms, warm-up ${ms} ms → copy 1 GiB kernel ${ks.join(' / ')} ms`);
  }
}

async function ops(): Promise<void> {
  const be = await createWebGpuBackend({ adapter: 'hardware', dawnFlags: flags });
  const run = async (label: string, f: () => Promise<{ timing?: { kernelMs?: number } }>, work: number, unit: string) => {
    await f();
    const ks: number[] = [];
    for (let i = 0; i < 3; i++) ks.push((await f()).timing?.kernelMs ?? NaN);
    const k = median(ks);
    console.log(`${label}: ${k.toFixed(3)} ms = ${(work / k / 1e3).toPrecision(4)} ${unit}`);
  };
  const w = CONV2D_WORKLOADS.seed[0]!;
  const cargs = makeConv2dArgs(w);
  for (const v of ['coalesced', 'coarsened']) await run(`conv2d ${w.label} ${v}`, () => be.conv2d(cargs, { variant: v, timing: true }), conv2dPixels(w) / 1e6, 'MPix/s');
  const sargs = makeStencil3dArgs({ n: 512, steps: 10, boundary: 'copy' });
  for (const v of ['naive', 'tiled', 'streamed']) await run(`stencil 512 ${v}`, () => be.stencil3d(sargs, { variant: v, timing: true }), stencil3dPointUpdates({ nx: 512, ny: 512, nz: 512, steps: 10 }) / 1e9, 'GPts/s');
  const qargs = makeScanArgs({ n: 40_000_000, dtype: 'f32' });
  await run('scan 40M rts', () => be.scan(qargs, { variant: 'reduce-then-scan', timing: true }), scanBytes(40_000_000, 'f32') / 1e9, 'GB/s');
  await be.dispose();
}

await micro();
if (o.ops) await ops();
