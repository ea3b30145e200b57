import type { Program } from '../runtime/program.js';

/**
 * conv2d WGSL, one builder per rung. K is baked in (loops unroll, the filter fits a uniform);
 * width/height/batch come from a uniform so one pipeline serves every image size.
 */
const HEADER = (filterDecl: string) => `
struct P { w: u32, h: u32, b: u32, pad: u32 }
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
 * The two untiled rungs share one body and differ only in how invocations map to pixels,
 * which is the whole lesson of the seeds' first step: coalescing.
 */
function conv2dDirect(name: string, k: number, workgroup: readonly [number, number], mapping: string): Program {
  const wgsl = `${HEADER(STORAGE_FILTER)}
const K: i32 = ${k}; const R: i32 = ${(k - 1) / 2};
@compute @workgroup_size(${workgroup.join(', ')}) fn main(@builtin(global_invocation_id) g: vec3u) {
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

/** The seed's baseline: thread index → row, so neighbouring threads read different rows. */
export function conv2dNaive(k: number): Program {
  return conv2dDirect('conv2d-naive', k, [64, 1], 'let y = i32(g.x); let x = i32(g.y);');
}

/** x fastest across a 32×8 workgroup: a warp reads 32 consecutive floats per filter tap. */
export function conv2dCoalesced(k: number): Program {
  return conv2dDirect('conv2d-coalesced', k, [32, 8], 'let x = i32(g.x); let y = i32(g.y);');
}

/**
 * Workgroup tile of (TH + 2R) × (TW·CX + 2R) input pixels (halo included, ghost cells as 0) and
 * the filter in a uniform. Each thread computes CX consecutive outputs of one row: the
 * K + CX − 1 inputs of a filter row sit in registers and serve all CX outputs (CX = 1 is the
 * plain `tiled` rung, CX > 1 the `coarsened` one).
 */
export function conv2dTiled(k: number, cx: number, tw = 32, th = 8): Program {
  const r = (k - 1) / 2;
  const cols = tw * cx + 2 * r;
  const rows = th + 2 * r;
  const win = k + cx - 1;
  const wgsl = `${HEADER(UNIFORM_FILTER(k))}
const K: i32 = ${k}; const R: i32 = ${r}; const CX: i32 = ${cx};
const COLS: i32 = ${cols}; const ROWS: i32 = ${rows};
var<workgroup> tile: array<f32, ${cols * rows}>;
@compute @workgroup_size(${tw}, ${th}) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) l: vec3u, @builtin(local_invocation_index) li: u32) {
  let h = i32(p.h); let w = i32(p.w);
  let base = wid.z * p.h * p.w;
  let x0 = i32(wid.x) * ${tw} * CX - R;
  let y0 = i32(wid.y) * ${th} - R;
  for (var t = i32(li); t < COLS * ROWS; t += ${tw * th}) {
    let yy = y0 + t / COLS; let xx = x0 + t % COLS;
    var v = 0.0;
    if (yy >= 0 && yy < h && xx >= 0 && xx < w) { v = inp[base + u32(yy * w + xx)]; }
    tile[t] = v;
  }
  workgroupBarrier();
  let lx = i32(l.x) * CX; let ly = i32(l.y);
  var acc: array<f32, ${cx}>;
  for (var i = 0; i < K; i++) {
    var win: array<f32, ${win}>;
    for (var j = 0; j < ${win}; j++) { win[j] = tile[(ly + i) * COLS + lx + j]; }
    for (var j = 0; j < K; j++) {
      let f = fv(i * K + j);
      for (var c = 0; c < CX; c++) { acc[c] += win[j + c] * f; }
    }
  }
  let y = y0 + R + ly;
  if (y >= h) { return; }
  for (var c = 0; c < CX; c++) {
    let x = x0 + R + lx + c;
    if (x < w) { outp[base + u32(y * w + x)] = acc[c]; }
  }
}`;
  const name = cx === 1 ? 'conv2d-tiled' : 'conv2d-coarsened';
  return { name, cacheKey: `${name}-k${k}-cx${cx}-${tw}x${th}`, workgroupSize: [tw, th, 1], wgsl };
}

/** Bytes of workgroup memory conv2dTiled needs. */
export const conv2dTileBytes = (k: number, cx: number, tw = 32, th = 8): number => (tw * cx + k - 1) * (th + k - 1) * 4;
