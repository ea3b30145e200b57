import type { Program } from '../runtime/program.js';

/** What both grid programs bake in: dimension counts, where each axis starts in `axes`, the prefix split. */
export interface GridShape {
  readonly d: number;
  readonly m: number;
  readonly counts: readonly number[];
  /** Dimensions decoded from the prefix index (x1 … x_outer). */
  readonly outer: number;
  /** Points per prefix (product of the remaining counts). */
  readonly inner: number;
}

const arr = (xs: readonly number[]) => `array<u32, ${Math.max(1, xs.length)}>(${(xs.length ? xs : [0]).map((v) => `${v}u`).join(', ')})`;
const offsets = (counts: readonly number[]) => counts.map((_, j) => counts.slice(0, j).reduce((a, b) => a + b, 0));
const key = (s: GridShape) => `d${s.d}-m${s.m}-o${s.outer}-c${s.counts.join('.')}`;

// Bindings are numbered densely (the host binds by position): `at` is where cand and p start.
const COMMON = (s: GridShape, at: number) => `
// A dispatch covers threads first … first + threads − 1 counted from the start of prefix prefixStart.
struct P { prefixStart: u32, threads: u32, cap: u32, first: u32 }
@group(0) @binding(0) var<storage, read> axes: array<f32>;
@group(0) @binding(${at}) var<storage, read_write> cand: array<atomic<u32>>;
@group(0) @binding(${at + 1}) var<uniform> p: P;
const D: u32 = ${s.d}u; const M: u32 = ${s.m}u; const OUTER: u32 = ${s.outer}u;
const CNT = ${arr(s.counts)};
const OFF = ${arr(offsets(s.counts))};
// Candidates are (prefix index, index within the prefix); the CPU sorts them into lexicographic order.
fn emit(pre: u32, inner: u32) {
  let k = atomicAdd(&cand[0], 1u);
  if (k < p.cap) { atomicStore(&cand[1u + 2u * k], pre); atomicStore(&cand[2u + 2u * k], inner); }
}`;

/**
 * Naive: one thread per point, its linear index decoded into every coordinate, every
 * constraint evaluated in full from storage buffers.
 */
export function gridNaive(s: GridShape): Program {
  const wgsl = `${COMMON(s, 4)}
@group(0) @binding(1) var<storage, read> coef: array<f32>;
@group(0) @binding(2) var<storage, read> tgt: array<f32>;
@group(0) @binding(3) var<storage, read> thr: array<f32>;
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let lt = (wid.x + wid.y * nwg.x) * 256u + li;
  if (lt >= p.threads) { return; }
  let t = p.first + lt;
  let pre = p.prefixStart + t / ${s.inner}u;
  let inner = t % ${s.inner}u;
  var x: array<f32, ${s.d}>;
  var q = pre;
  for (var j = i32(OUTER) - 1; j >= 0; j--) { x[j] = axes[OFF[j] + q % CNT[j]]; q = q / CNT[j]; }
  q = inner;
  for (var j = i32(D) - 1; j >= i32(OUTER); j--) { x[j] = axes[OFF[j] + q % CNT[j]]; q = q / CNT[j]; }
  var ok = true;
  for (var i = 0u; i < M; i++) {
    var acc = 0.0;
    for (var j = 0u; j < D; j++) { acc += coef[i * D + j] * x[j]; }
    ok = ok && !(abs(acc - tgt[i]) > thr[i]);
  }
  if (ok) { emit(pre, inner); }
}`;
  return { name: 'grid-naive', cacheKey: `grid-naive-${key(s)}`, workgroupSize: [256, 1, 1], wgsl };
}

/**
 * Optimized: coefficients, targets and thresholds in a uniform; a thread fixes x1 … x_{D−1},
 * forms the M partial sums once, then loops the innermost axis adding one product per
 * constraint and leaving at the first failed constraint.
 */
export function gridOptimized(s: GridShape): Program {
  const m4 = Math.max(1, Math.ceil((s.m * s.d) / 4));
  const mm = Math.max(1, s.m);
  const last = s.counts[s.d - 1]!;
  const wgsl = `${COMMON(s, 2)}
struct U { coef: array<vec4<f32>, ${m4}>, tgt: array<vec4<f32>, ${Math.ceil(mm / 4)}>, thr: array<vec4<f32>, ${Math.ceil(mm / 4)}> }
@group(0) @binding(1) var<uniform> u: U;
fn cf(i: u32) -> f32 { return u.coef[i / 4u][i % 4u]; }
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let lt = (wid.x + wid.y * nwg.x) * 256u + li;
  if (lt >= p.threads) { return; }
  let t = p.first + lt;
  const PER: u32 = ${s.inner / last}u;
  let pre = p.prefixStart + t / PER;
  let innerT = t % PER;
  var x: array<f32, ${s.d}>;
  var q = pre;
  for (var j = i32(OUTER) - 1; j >= 0; j--) { x[j] = axes[OFF[j] + q % CNT[j]]; q = q / CNT[j]; }
  q = innerT;
  for (var j = i32(D) - 2; j >= i32(OUTER); j--) { x[j] = axes[OFF[j] + q % CNT[j]]; q = q / CNT[j]; }
  var part: array<f32, ${mm}>;
  var cl: array<f32, ${mm}>;
  for (var i = 0u; i < M; i++) {
    var acc = 0.0;
    for (var j = 0u; j + 1u < D; j++) { acc += cf(i * D + j) * x[j]; }
    part[i] = acc;
    cl[i] = cf(i * D + D - 1u);
  }
  for (var r = 0u; r < ${last}u; r++) {
    let xl = axes[OFF[D - 1u] + r];
    var ok = true;
    for (var i = 0u; i < M; i++) {
      if (abs(part[i] + cl[i] * xl - u.tgt[i / 4u][i % 4u]) > u.thr[i / 4u][i % 4u]) { ok = false; break; }
    }
    if (ok) { emit(pre, innerT * ${last}u + r); }
  }
}`;
  return { name: 'grid-optimized', cacheKey: `grid-optimized-${key(s)}`, workgroupSize: [256, 1, 1], wgsl };
}

/** Axes the pruned kernel walks depth-first per thread (the rest index threads). */
export const PRUNED_DEPTH = 4;

/**
 * Pruned: a thread fixes every axis but the last `r` (prefix and middle index), then walks those
 * `r` axes depth-first. Before descending it tests each constraint against interval bounds of
 * the axes still free (`bnd`: per level and constraint, the f32 lower and upper bound of
 * Σ c_ij·x_j over them, rounded outward on the host); a subtree none of whose points can meet a
 * constraint is skipped whole. Leaves take the same screen test as the other kernels. Why the
 * skip is safe (never drops a point the f64 search keeps) is in grid-search.ts (prunedBounds).
 */
export function gridPruned(s: GridShape, r: number): Program {
  const m4 = Math.max(1, Math.ceil((s.m * s.d) / 4));
  const mm = Math.max(1, s.m);
  const p0 = s.d - r; // first walked axis
  const midN = s.counts.slice(s.outer, p0).reduce((a, b) => a * b, 1);
  const restW = s.counts.slice(p0).map((_, level) => s.counts.slice(p0 + level + 1).reduce((a, b) => a * b, 1));
  const restN = s.counts.slice(p0).reduce((a, b) => a * b, 1);
  const wgsl = `${COMMON(s, 3)}
struct U { coef: array<vec4<f32>, ${m4}>, tgt: array<vec4<f32>, ${Math.ceil(mm / 4)}>, thr: array<vec4<f32>, ${Math.ceil(mm / 4)}> }
@group(0) @binding(1) var<uniform> u: U;
@group(0) @binding(2) var<storage, read> bnd: array<vec2<f32>>;
fn cf(i: u32) -> f32 { return u.coef[i / 4u][i % 4u]; }
fn tg(i: u32) -> f32 { return u.tgt[i / 4u][i % 4u]; }
fn th(i: u32) -> f32 { return u.thr[i / 4u][i % 4u]; }
const R: u32 = ${r}u; const P0: u32 = ${p0}u;
const RESTW = ${arr(restW)};
// Some point below this level (axes < P0 + level fixed, partial sums v) may meet every constraint.
fn open(level: u32, i0: u32, v: f32) -> bool {
  let b = bnd[level * M + i0];
  return !(v + b.y - tg(i0) < -th(i0) || v + b.x - tg(i0) > th(i0));
}
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let lt = (wid.x + wid.y * nwg.x) * 256u + li;
  if (lt >= p.threads) { return; }
  let t = p.first + lt;
  let pre = p.prefixStart + t / ${midN}u;
  let mid = t % ${midN}u;
  var x: array<f32, ${s.d}>;
  var q = pre;
  for (var j = i32(OUTER) - 1; j >= 0; j--) { x[j] = axes[OFF[j] + q % CNT[j]]; q = q / CNT[j]; }
  q = mid;
  for (var j = i32(P0) - 1; j >= i32(OUTER); j--) { x[j] = axes[OFF[j] + q % CNT[j]]; q = q / CNT[j]; }
  // part[level·M + i]: constraint i summed over the axes fixed at this level.
  var part: array<f32, ${mm * (r + 1)}>;
  for (var i = 0u; i < M; i++) {
    var acc = 0.0;
    for (var j = 0u; j < P0; j++) { acc += cf(i * D + j) * x[j]; }
    part[i] = acc;
    if (!open(0u, i, acc)) { return; }
  }
  var idx: array<u32, ${r}>;
  var level = 0u;
  loop {
    if (idx[level] >= CNT[P0 + level]) {
      if (level == 0u) { break; }
      level--;
      idx[level]++;
      continue;
    }
    let j = P0 + level;
    let xv = axes[OFF[j] + idx[level]];
    var ok = true;
    for (var i = 0u; i < M; i++) {
      let v = part[level * M + i] + cf(i * D + j) * xv;
      part[(level + 1u) * M + i] = v;
      if (level + 1u == R) { ok = !(abs(v - tg(i)) > th(i)); } else { ok = open(level + 1u, i, v); }
      if (!ok) { break; }
    }
    if (ok && level + 1u == R) {
      var rest = 0u;
      for (var k = 0u; k < R; k++) { rest += idx[k] * RESTW[k]; }
      emit(pre, mid * ${restN}u + rest);
    }
    if (ok && level + 1u < R) {
      level++;
      idx[level] = 0u;
    } else {
      idx[level]++;
    }
  }
}`;
  return { name: 'grid-pruned', cacheKey: `grid-pruned-r${r}-${key(s)}`, workgroupSize: [256, 1, 1], wgsl };
}
