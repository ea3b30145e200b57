import type { Program } from '../runtime/program.js';

/**
 * conv2d WGSL, one builder per variant. K is baked in (loops unroll, the filter fits a uniform);
 * width/height come from a uniform so one pipeline serves every image size, with the offset (in
 * workgroups) of this dispatch's part of the grid: grids past the device's per-dimension limit,
 * or too long for one submit, run as several dispatches (runtime/usage.ts gridParts).
 */
const HEADER = (filterDecl: string) => `
struct P { w: u32, h: u32, ox: u32, oy: u32, oz: u32, pad0: u32, pad1: u32, pad2: u32 }
@group(0) @binding(0) var<storage, read> inp: array<f32>;
${filterDecl}
@group(0) @binding(2) var<storage, read_write> outp: array<f32>;
@group(0) @binding(3) var<uniform> p: P;
`;
const STORAGE_FILTER = '@group(0) @binding(1) var<storage, read> filt: array<f32>;\nfn fv(i: i32) -> f32 { return filt[i]; }';
// Uniform arrays need a 16-byte stride: the k×k filter is packed into vec4s ("constant memory").
const UNIFORM_FILTER = (k: number) =>
  `@group(0) @binding(1) var<uniform> filt: array<vec4<f32>, ${Math.ceil((k * k) / 4)}>;\nfn fv(i: i32) -> f32 { return filt[i / 4][i % 4]; }`;

/**
 * The two untiled variants share one body and differ only in how invocations map to pixels:
 * coalescing, the first optimisation step of the course reports.
 */
function conv2dDirect(name: string, k: number, workgroup: readonly [number, number], mapping: string): Program {
  const wgsl = `${HEADER(STORAGE_FILTER)}
const K: i32 = ${k}; const R: i32 = ${(k - 1) / 2};
@compute @workgroup_size(${workgroup.join(', ')}) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) l: vec3u) {
  let g = (wid + vec3u(p.ox, p.oy, p.oz)) * vec3u(${workgroup[0]}u, ${workgroup[1]}u, 1u) + l;
  let h = i32(p.h); let w = i32(p.w);
  ${mapping}
  if (y >= h || x >= w) { return; }
  let base = g.z * p.h * p.w;
  var acc = 0.0;
  for (var i = 0; i < K; i++) {
    let yy = y + i - R;
    if (yy < 0 || yy >= h) { continue; }
    for (var j = 0; j < K; j++) {
      let xx = x + j - R;
      if (xx < 0 || xx >= w) { continue; }
      acc += inp[base + u32(yy * w + xx)] * fv(i * K + j);
    }
  }
  outp[base + u32(y * w + x)] = acc;
}`;
  return { name, cacheKey: `${name}-k${k}`, workgroupSize: [workgroup[0], workgroup[1], 1], wgsl };
}

/** The course reports' baseline: thread index → row, so neighbouring threads read different rows. */
export function conv2dNaive(k: number): Program {
  return conv2dDirect('conv2d-naive', k, [64, 1], 'let y = i32(g.x); let x = i32(g.y);');
}

/** x fastest across a 32×8 workgroup: a warp reads 32 consecutive floats per filter tap. */
export function conv2dCoalesced(k: number): Program {
  return conv2dDirect('conv2d-coalesced', k, [32, 8], 'let x = i32(g.x); let y = i32(g.y);');
}

/**
 * The shape of one tiled kernel: a `tile[0]`×`tile[1]` workgroup (x fastest) where each invocation
 * computes a `perThread[0]`×`perThread[1]` block of adjacent outputs (columns × rows). The named
 * variants are two points of this space (TILED_CONFIG, COARSENED_CONFIG); `auto` sweeps a few more.
 * Plain JSON on purpose: the tuning cache file stores it.
 */
export interface Conv2dTileConfig {
  readonly tile: readonly [x: number, y: number];
  readonly perThread: readonly [x: number, y: number];
}

export const TILED_CONFIG: Conv2dTileConfig = { tile: [32, 8], perThread: [1, 1] };
export const COARSENED_CONFIG: Conv2dTileConfig = { tile: [32, 8], perThread: [4, 1] };

/** Output pixels one workgroup covers, [columns, rows]. */
export const conv2dBlock = (c: Conv2dTileConfig): [number, number] => [c.tile[0] * c.perThread[0], c.tile[1] * c.perThread[1]];

/**
 * The per-input-row update, unrolled over the CY output rows here rather than in WGSL: input row
 * i feeds output row o through filter row i − o, where 0 ≤ i − o < K. Emitting one block per o
 * with literal indices (and a guard only where i can leave that range) keeps every loop bound a
 * constant, so the driver unrolls everything and `acc` stays in registers. A WGSL loop over o
 * with bounds max(0, i − K + 1)…min(CY − 1, i) spills acc to local memory (every tiled config
 * ran several times slower on the H100); CY = 1 emits the plain single-row loop nest.
 */
function outputRows(cx: number, cy: number): string {
  const blocks: string[] = [];
  for (let o = 0; o < cy; o++) {
    const guard = [o > 0 ? `i >= ${o}` : '', o < cy - 1 ? `i < K + ${o}` : ''].filter((g) => g !== '').join(' && ');
    const body = [
      'for (var j = 0; j < K; j++) {',
      `  let f = fv(${o === 0 ? 'i' : `(i - ${o})`} * K + j);`,
      `  for (var c = 0; c < CX; c++) { acc[${o === 0 ? 'c' : `${o * cx} + c`}] += win[j + c] * f; }`,
      '}',
    ];
    const lines = guard === '' ? body : [`if (${guard}) {`, ...body.map((line) => `  ${line}`), '}'];
    blocks.push(lines.map((line) => `    ${line}`).join('\n'));
  }
  return blocks.join('\n');
}

/**
 * Workgroup tile of (TH·CY + 2R) × (TW·CX + 2R) input pixels (halo included, ghost cells as 0)
 * and the filter in a uniform. Each invocation computes a CX×CY block of adjacent outputs: it
 * walks the K + CY − 1 input rows its block touches, keeps the K + CX − 1 inputs of each in
 * registers, and feeds every output row that input row reaches (filter row i − o). So one
 * workgroup-memory read serves up to K·CX·CY multiply-adds. CX = CY = 1 is the plain `tiled`
 * variant; CX = 4, CY = 1 the `coarsened` one (both keep the single-row kernels' arithmetic order).
 */
export function conv2dTiled(k: number, config: Conv2dTileConfig): Program {
  const [tw, th] = config.tile;
  const [cx, cy] = config.perThread;
  const [bw, bh] = conv2dBlock(config);
  const r = (k - 1) / 2;
  const cols = bw + 2 * r;
  const rows = bh + 2 * r;
  const win = k + cx - 1;
  const wgsl = `${HEADER(UNIFORM_FILTER(k))}
const K: i32 = ${k}; const R: i32 = ${r}; const CX: i32 = ${cx}; const CY: i32 = ${cy};
const COLS: i32 = ${cols}; const ROWS: i32 = ${rows};
var<workgroup> tile: array<f32, ${cols * rows}>;
@compute @workgroup_size(${tw}, ${th}) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) l: vec3u, @builtin(local_invocation_index) li: u32) {
  let h = i32(p.h); let w = i32(p.w);
  let base = (wid.z + p.oz) * p.h * p.w;
  let x0 = i32(wid.x + p.ox) * ${bw} - R;
  let y0 = i32(wid.y + p.oy) * ${bh} - R;
  for (var t = i32(li); t < COLS * ROWS; t += ${tw * th}) {
    let yy = y0 + t / COLS; let xx = x0 + t % COLS;
    var v = 0.0;
    if (yy >= 0 && yy < h && xx >= 0 && xx < w) { v = inp[base + u32(yy * w + xx)]; }
    tile[t] = v;
  }
  workgroupBarrier();
  let lx = i32(l.x) * CX; let ly = i32(l.y) * CY;
  var acc: array<f32, ${cx * cy}>;
  for (var i = 0; i < K + CY - 1; i++) {
    var win: array<f32, ${win}>;
    for (var j = 0; j < ${win}; j++) { win[j] = tile[(ly + i) * COLS + lx + j]; }
${outputRows(cx, cy)}
  }
  for (var o = 0; o < CY; o++) {
    let y = y0 + R + ly + o;
    if (y >= h) { return; }
    for (var c = 0; c < CX; c++) {
      let x = x0 + R + lx + c;
      if (x < w) { outp[base + u32(y * w + x)] = acc[o * CX + c]; }
    }
  }
}`;
  const name = cx * cy === 1 ? 'conv2d-tiled' : 'conv2d-coarsened';
  return { name, cacheKey: `${name}-k${k}-${tw}x${th}-${cx}x${cy}`, workgroupSize: [tw, th, 1], wgsl };
}

/** Bytes of workgroup memory conv2dTiled needs. */
export function conv2dTileBytes(k: number, config: Conv2dTileConfig): number {
  const [bw, bh] = conv2dBlock(config);
  return (bw + k - 1) * (bh + k - 1) * 4;
}
