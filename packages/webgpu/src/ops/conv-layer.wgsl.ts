import type { Program } from '../runtime/program.js';

/** Shapes come from a uniform; only K (and the gemm map tile) is baked in, so loops unroll. */
const HEADER = `
struct P { n: u32, c: u32, h: u32, w: u32, m: u32, oh: u32, ow: u32, flags: u32 }
@group(0) @binding(0) var<storage, read> inp: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> outp: array<f32>;
@group(0) @binding(4) var<uniform> p: P;
// flags bit 0: add bias; bit 1: ReLU (select keeps NaN, as the reference does).
fn finish(v: f32, m: u32) -> f32 {
  var s = v;
  if ((p.flags & 1u) != 0u) { s = s + bias[m]; }
  if ((p.flags & 2u) != 0u) { s = select(s, 0.0, s <= 0.0); }
  return s;
}`;
const STORAGE_W = '@group(0) @binding(1) var<storage, read> wt: array<f32>;\nfn wv(i: u32) -> f32 { return wt[i]; }';

/** One thread per output; every input and weight read from global memory. */
export function convLayerDirect(k: number): Program {
  const wgsl = `${HEADER}
${STORAGE_W}
const K: u32 = ${k}u;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3u) {
  let pix = g.x; let m = g.y; let b = g.z;
  if (pix >= p.oh * p.ow) { return; }
  let oy = pix / p.ow; let ox = pix % p.ow;
  var acc = 0.0;
  for (var c = 0u; c < p.c; c++) {
    let ib = ((b * p.c + c) * p.h + oy) * p.w + ox;
    let wb = ((m * p.c + c) * K) * K;
    for (var i = 0u; i < K; i++) { for (var j = 0u; j < K; j++) { acc += inp[ib + i * p.w + j] * wv(wb + i * K + j); } }
  }
  outp[((b * p.m + m) * p.oh + oy) * p.ow + ox] = finish(acc, m);
}`;
  return { name: 'conv-layer-direct', cacheKey: `conv-layer-direct-k${k}`, workgroupSize: [256, 1, 1], wgsl };
}

/** 16×16 outputs of one (image, map) per workgroup: each channel's input tile + halo in workgroup memory, weights in a uniform. */
export function convLayerTiled(k: number, weightVec4s: number): Program {
  const T = 16 + k - 1;
  const wgsl = `${HEADER}
@group(0) @binding(1) var<uniform> wt: array<vec4<f32>, ${weightVec4s}>;
fn wv(i: u32) -> f32 { return wt[i / 4u][i % 4u]; }
const K: u32 = ${k}u; const T: u32 = ${T}u;
var<workgroup> tile: array<f32, ${T * T}>;
@compute @workgroup_size(16, 16) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) l: vec3u, @builtin(local_invocation_index) li: u32) {
  let tilesX = (p.ow + 15u) / 16u;
  let ox0 = (wid.x % tilesX) * 16u; let oy0 = (wid.x / tilesX) * 16u;
  let m = wid.y; let b = wid.z;
  let ox = ox0 + l.x; let oy = oy0 + l.y;
  var acc = 0.0;
  for (var c = 0u; c < p.c; c++) {
    let ib = (b * p.c + c) * p.h * p.w;
    workgroupBarrier();
    for (var t = li; t < T * T; t += 256u) {
      let y = oy0 + t / T; let x = ox0 + t % T;
      var v = 0.0;
      if (y < p.h && x < p.w) { v = inp[ib + y * p.w + x]; }
      tile[t] = v;
    }
    workgroupBarrier();
    let wb = ((m * p.c + c) * K) * K;
    for (var i = 0u; i < K; i++) { for (var j = 0u; j < K; j++) { acc += tile[(l.y + i) * T + l.x + j] * wv(wb + i * K + j); } }
  }
  if (ox < p.ow && oy < p.oh) { outp[((b * p.m + m) * p.oh + oy) * p.ow + ox] = finish(acc, m); }
}`;
  return { name: 'conv-layer-tiled', cacheKey: `conv-layer-tiled-k${k}-w${weightVec4s}`, workgroupSize: [16, 16, 1], wgsl };
}

export const GEMM_KC = 32;

/**
 * Implicit GEMM: out[m][pixel] = Σ_kk W[m][kk] · X[kk][pixel], kk = (c, p, q), X gathered on
 * the fly from the input. Workgroup tiling: a KC×MT slab of weights in workgroup memory, read
 * by all 256 threads as broadcasts. Register tiling: each thread keeps MT accumulators for its
 * pixel, so every input value loaded from global memory feeds MT multiply-adds.
 */
export function convLayerGemm(k: number, mt: number): Program {
  const wgsl = `${HEADER}
${STORAGE_W}
const K: u32 = ${k}u; const MT: u32 = ${mt}u; const KC: u32 = ${GEMM_KC}u;
var<workgroup> ws: array<f32, ${GEMM_KC * mt}>;
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let npix = p.n * p.oh * p.ow;
  let pix = (wid.x + wid.z * nwg.x) * 256u + li;
  let live = pix < npix;
  let q = min(pix, npix - 1u);
  let b = q / (p.oh * p.ow); let r = q % (p.oh * p.ow);
  let oy = r / p.ow; let ox = r % p.ow;
  let m0 = wid.y * MT;
  let kk = p.c * K * K;
  let ibase = (b * p.c * p.h + oy) * p.w + ox;
  var acc: array<f32, ${mt}>;
  for (var k0 = 0u; k0 < kk; k0 += KC) {
    workgroupBarrier();
    for (var t = li; t < KC * MT; t += 256u) {
      let kq = k0 + t / MT; let mm = m0 + t % MT;
      var v = 0.0;
      if (kq < kk && mm < p.m) { v = wv(mm * kk + kq); }
      ws[t] = v;
    }
    workgroupBarrier();
    let kend = min(KC, kk - k0);
    for (var t = 0u; t < kend; t++) {
      let kq = k0 + t;
      let c = kq / (K * K); let rr = kq % (K * K);
      let x = inp[ibase + (c * p.h + rr / K) * p.w + rr % K];
      for (var mm = 0u; mm < MT; mm++) { acc[mm] += ws[t * MT + mm] * x; }
    }
  }
  if (!live) { return; }
  for (var mm = 0u; mm < MT; mm++) {
    let m = m0 + mm;
    if (m < p.m) { outp[((b * p.m + m) * p.oh + oy) * p.ow + ox] = finish(acc[mm], m); }
  }
}`;
  return { name: 'conv-layer-gemm', cacheKey: `conv-layer-gemm-k${k}-mt${mt}`, workgroupSize: [256, 1, 1], wgsl };
}
