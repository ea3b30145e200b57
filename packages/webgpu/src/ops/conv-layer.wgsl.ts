import type { Program } from '../runtime/program.js';

/**
 * Shapes come from a uniform; only K (and the gemm map tile) is baked in, so loops unroll. The
 * uniform also holds the offset (in workgroups) of this dispatch's part of the grid: grids past
 * the per-dimension limit, or too long for one submit, run as several (runtime/usage.ts gridParts).
 */
const HEADER = `
struct P { n: u32, c: u32, h: u32, w: u32, m: u32, oh: u32, ow: u32, flags: u32, ox: u32, oy: u32, oz: u32, pad: u32 }
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
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let pix = (wid.x + p.ox) * 256u + li; let m = wid.y + p.oy; let b = wid.z + p.oz;
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
  let ti = wid.x + p.ox;
  let ox0 = (ti % tilesX) * 16u; let oy0 = (ti / tilesX) * 16u;
  let m = wid.y + p.oy; let b = wid.z + p.oz;
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
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let npix = p.n * p.oh * p.ow;
  let pix = (wid.x + p.ox) * 256u + li;
  let live = pix < npix;
  let q = min(pix, npix - 1u);
  let b = q / (p.oh * p.ow); let r = q % (p.oh * p.ow);
  let oy = r / p.ow; let ox = r % p.ow;
  let m0 = (wid.y + p.oy) * MT;
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

/** Pixel register tiles of the gemm kernel: outputs per thread along x. */
export type GemmPixels = 1 | 2 | 4;

/** Weights held in workgroup memory per pass of the channel loop: about 16 KiB of vec4s. */
export const gemmChannelsPerPass = (k: number, mt: number): number => Math.max(1, Math.floor(4096 / (k * k * mt)));

/**
 * Implicit GEMM with joint register tiling: each thread computes PX consecutive outputs of one
 * row for MT maps (PX·MT accumulators), so one input row window of PX+K−1 values loaded from
 * global memory feeds K·PX·MT multiply-adds, and each vec4 of weights read from workgroup memory
 * (broadcast: every thread reads the same one) feeds 4·PX. The kernel with PX = 1 (above) loads
 * K² inputs and K²·MT weights per pixel for K²·MT multiply-adds; this form cuts both by about PX.
 * The workgroup keeps the weights of CC channels for its MT maps ([c][tap][map/4] as vec4s).
 * The tap loops are unrolled here (K and PX are baked in) so the accumulators stay in registers.
 */
export function convLayerGemmPx(k: number, mt: number, px: GemmPixels): Program {
  const M4 = mt / 4;
  const CC = gemmChannelsPerPass(k, mt);
  const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
  const acc = (x: number, m4: number): string => `a${x}_${m4}`;
  const decls = range(px).flatMap((x) => range(M4).map((m4) => `var ${acc(x, m4)} = vec4<f32>();`));
  // A row window past the row's end (ragged last group) is clamped: those values only feed outputs that are not stored.
  const loads = range(px + k - 1).map((j) => `let x${j} = inp[rb + min(ox0 + ${j}u, p.w - 1u)];`);
  const fmas = range(k).flatMap((q) => range(M4).map((m4) => `{ let w = ws[(wr + ${q}u) * ${M4}u + ${m4}u]; ${range(px).map((x) => `${acc(x, m4)} += w * x${x + q};`).join(' ')} }`));
  const stores = range(M4).flatMap((m4) =>
    range(4).flatMap((e) =>
      range(px).map(
        (x) => `if (m0 + ${m4 * 4 + e}u < p.m && ox0 + ${x}u < p.ow) { let m = m0 + ${m4 * 4 + e}u; outp[((b * p.m + m) * p.oh + oy) * p.ow + ox0 + ${x}u] = finish(${acc(x, m4)}[${e}], m); }`,
      ),
    ),
  );
  const wgsl = `${HEADER}
${STORAGE_W}
const K: u32 = ${k}u; const MT: u32 = ${mt}u; const M4: u32 = ${M4}u; const PX: u32 = ${px}u; const CC: u32 = ${CC}u;
var<workgroup> ws: array<vec4<f32>, ${CC * k * k * M4}>;
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let gx = (p.ow + PX - 1u) / PX;
  let ng = p.n * p.oh * gx;
  let gi = (wid.x + p.ox) * 256u + li;
  let live = gi < ng;
  let q = min(gi, ng - 1u);
  let b = q / (p.oh * gx); let r = q % (p.oh * gx);
  let oy = r / gx; let ox0 = (r % gx) * PX;
  let m0 = (wid.y + p.oy) * MT;
  ${decls.join('\n  ')}
  for (var c0 = 0u; c0 < p.c; c0 += CC) {
    workgroupBarrier();
    for (var t = li; t < CC * K * K * M4; t += 256u) {
      let m4 = t % M4; let rest = t / M4; let tap = rest % (K * K); let c = c0 + rest / (K * K);
      var v = vec4<f32>();
      for (var e = 0u; e < 4u; e++) {
        let m = m0 + m4 * 4u + e;
        if (c < p.c && m < p.m) { v[e] = wv((m * p.c + c) * K * K + tap); }
      }
      ws[t] = v;
    }
    workgroupBarrier();
    let cend = min(CC, p.c - c0);
    for (var cl = 0u; cl < cend; cl++) {
      for (var pp = 0u; pp < K; pp++) {
        let rb = ((b * p.c + c0 + cl) * p.h + oy + pp) * p.w;
        let wr = (cl * K + pp) * K;
        ${loads.join('\n        ')}
        ${fmas.join('\n        ')}
      }
    }
  }
  if (!live) { return; }
  ${stores.join('\n  ')}
}`;
  return { name: 'conv-layer-gemm-px', cacheKey: `conv-layer-gemm-k${k}-mt${mt}-px${px}`, workgroupSize: [256, 1, 1], wgsl };
}
