import type { Program } from '../runtime/program.js';

export type WgslScalar = 'u32' | 'i32' | 'f32';

/**
 * Scan WGSL. Integer `+` wraps in WGSL (two's complement), which is exactly the mod-2^32
 * semantics the contract asks of u32/i32. The carry-in arrives as raw bits and is bitcast.
 */
const PARAMS = 'struct P { n: u32, init: u32, inclusive: u32, pad: u32 }';
const LIN = 'let wg = wid.x + wid.y * nwg.x;';
const BUILTINS = '@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32';

export const BLELLOCH_BLOCK = 512;

/** Work-efficient Blelloch scan of 512 elements per workgroup (up-sweep, down-sweep): local exclusive prefixes + block sums. */
export function blellochBlocks(t: WgslScalar): Program {
  const wgsl = `${PARAMS}
@group(0) @binding(0) var<storage, read> src: array<${t}>;
@group(0) @binding(1) var<storage, read_write> dst: array<${t}>;
@group(0) @binding(2) var<storage, read_write> sums: array<${t}>;
@group(0) @binding(3) var<uniform> p: P;
var<workgroup> s: array<${t}, 512>;
@compute @workgroup_size(256) fn main(${BUILTINS}) {
  ${LIN}
  // A folded grid (grid1d) has spare workgroups past the last block: they must not write sums[wg].
  if (wg >= (p.n + 511u) / 512u) { return; }
  let base = wg * 512u;
  let i0 = base + li; let i1 = base + li + 256u;
  s[li] = select(${t}(), src[min(i0, p.n - 1u)], i0 < p.n);
  s[li + 256u] = select(${t}(), src[min(i1, p.n - 1u)], i1 < p.n);
  var off = 1u;
  for (var d = 256u; d > 0u; d = d >> 1u) {
    workgroupBarrier();
    if (li < d) { let a = off * (2u * li + 1u) - 1u; let b = off * (2u * li + 2u) - 1u; s[b] = s[b] + s[a]; }
    off = off << 1u;
  }
  workgroupBarrier();
  if (li == 0u) { sums[wg] = s[511]; s[511] = ${t}(); }
  for (var d = 1u; d < 512u; d = d << 1u) {
    off = off >> 1u;
    workgroupBarrier();
    if (li < d) { let a = off * (2u * li + 1u) - 1u; let b = off * (2u * li + 2u) - 1u; let v = s[a]; s[a] = s[b]; s[b] = s[b] + v; }
  }
  workgroupBarrier();
  if (i0 < p.n) { dst[i0] = s[li]; }
  if (i1 < p.n) { dst[i1] = s[li + 256u]; }
}`;
  return { name: 'scan-blelloch-blocks', cacheKey: `scan-blelloch-blocks-${t}`, workgroupSize: [256, 1, 1], wgsl };
}

/** out = carry-in + block offset + local exclusive prefix (+ x for an inclusive scan), in place. */
export function addOffsets(t: WgslScalar, block: number): Program {
  const wgsl = `${PARAMS}
@group(0) @binding(0) var<storage, read_write> dst: array<${t}>;
@group(0) @binding(1) var<storage, read> src: array<${t}>;
@group(0) @binding(2) var<storage, read> offs: array<${t}>;
@group(0) @binding(3) var<uniform> p: P;
@compute @workgroup_size(256) fn main(${BUILTINS}) {
  ${LIN}
  let i = wg * 256u + li;
  if (i >= p.n) { return; }
  var v = bitcast<${t}>(p.init) + offs[i / ${block}u] + dst[i];
  if (p.inclusive == 1u) { v = v + src[i]; }
  dst[i] = v;
}`;
  return { name: 'scan-add-offsets', cacheKey: `scan-add-offsets-${t}-${block}`, workgroupSize: [256, 1, 1], wgsl };
}

export const RTS_ITEMS = 8;
export const RTS_TILE = 256 * RTS_ITEMS;

/** Reduce phase: one sum per 2048-element tile (coalesced strided loads, tree in workgroup memory). */
export function rtsReduce(t: WgslScalar): Program {
  const wgsl = `${PARAMS}
@group(0) @binding(0) var<storage, read> src: array<${t}>;
@group(0) @binding(1) var<storage, read_write> sums: array<${t}>;
@group(0) @binding(2) var<uniform> p: P;
var<workgroup> s: array<${t}, 256>;
@compute @workgroup_size(256) fn main(${BUILTINS}) {
  ${LIN}
  if (wg >= (p.n + ${RTS_TILE - 1}u) / ${RTS_TILE}u) { return; } // spare workgroup of a folded grid
  let base = wg * ${RTS_TILE}u;
  var acc = ${t}();
  for (var j = 0u; j < ${RTS_ITEMS}u; j++) { let i = base + j * 256u + li; if (i < p.n) { acc = acc + src[i]; } }
  s[li] = acc;
  for (var d = 128u; d > 0u; d = d >> 1u) {
    workgroupBarrier();
    if (li < d) { s[li] = s[li] + s[li + d]; }
  }
  if (li == 0u) { sums[wg] = s[0]; }
}`;
  return { name: 'scan-rts-reduce', cacheKey: `scan-rts-reduce-${t}`, workgroupSize: [256, 1, 1], wgsl };
}

/**
 * The tile scan shared by reduce-then-scan and decoupled: the tile goes through workgroup
 * memory (coalesced), each thread scans 8 contiguous items serially, a Hillis–Steele pass
 * scans the 256 thread totals, and `TILE_PREFIX` supplies the tile's offset.
 */
function tileScan(t: WgslScalar, decls: string, prefix: string): string {
  return `${PARAMS}
@group(0) @binding(0) var<storage, read> src: array<${t}>;
@group(0) @binding(1) var<storage, read_write> dst: array<${t}>;
@group(0) @binding(2) var<uniform> p: P;
${decls}
var<workgroup> s: array<${t}, ${RTS_TILE}>;
var<workgroup> tot: array<${t}, 256>;
var<workgroup> tileOffset: ${t};
fn tileBody(tile: u32, li: u32) {
  let base = tile * ${RTS_TILE}u;
  for (var j = 0u; j < ${RTS_ITEMS}u; j++) { let i = base + j * 256u + li; s[j * 256u + li] = select(${t}(), src[min(i, p.n - 1u)], i < p.n); }
  workgroupBarrier();
  var run = ${t}();
  for (var j = 0u; j < ${RTS_ITEMS}u; j++) { run = run + s[li * ${RTS_ITEMS}u + j]; }
  tot[li] = run;
  for (var d = 1u; d < 256u; d = d << 1u) {
    workgroupBarrier();
    var v = tot[li];
    if (li >= d) { v = v + tot[li - d]; }
    workgroupBarrier();
    tot[li] = v;
  }
  workgroupBarrier();
  ${prefix}
  workgroupBarrier();
  var acc = bitcast<${t}>(p.init) + tileOffset;
  if (li > 0u) { acc = acc + tot[li - 1u]; }
  for (var j = 0u; j < ${RTS_ITEMS}u; j++) {
    let k = li * ${RTS_ITEMS}u + j;
    let x = s[k];
    if (p.inclusive == 1u) { acc = acc + x; s[k] = acc; } else { s[k] = acc; acc = acc + x; }
  }
  workgroupBarrier();
  for (var j = 0u; j < ${RTS_ITEMS}u; j++) { let i = base + j * 256u + li; if (i < p.n) { dst[i] = s[j * 256u + li]; } }
}`;
}

/** Downsweep of reduce-then-scan: tile offsets come from the scanned tile sums. */
export function rtsScan(t: WgslScalar): Program {
  const wgsl = `${tileScan(t, `@group(0) @binding(3) var<storage, read> offs: array<${t}>;`, 'if (li == 0u) { tileOffset = offs[tile]; }')}
@compute @workgroup_size(256) fn main(${BUILTINS}) {
  ${LIN}
  if (wg >= (p.n + ${RTS_TILE - 1}u) / ${RTS_TILE}u) { return; } // spare workgroup: offs[wg] is out of range
  tileBody(wg, li);
}`;
  return { name: 'scan-rts-scan', cacheKey: `scan-rts-scan-v2-${t}`, workgroupSize: [256, 1, 1], wgsl };
}

/**
 * Single-pass scan with decoupled look-back (Merrill & Garland) and a fallback. Tiles are
 * numbered in the order workgroups start (atomic counter), so a tile only waits on tiles that
 * already started. Each tile publishes its aggregate, then its inclusive prefix; a value is
 * 32 bits, so it is split into two 16-bit halves, each packed with the flag into one atomic
 * (flag in bits 16–17): a reader accepts a value only when both halves carry the same flag.
 * Fallback: after SPIN empty polls the waiting thread reduces the predecessor tile itself from
 * the input, so progress never depends on the scheduler running other workgroups.
 */
export function decoupledScan(t: WgslScalar, spin = 4096): Program {
  const decls = `@group(0) @binding(3) var<storage, read_write> state: array<atomic<u32>>;
var<workgroup> tileId: u32;
fn publish(tile: u32, flag: u32, v: ${t}) {
  let b = bitcast<u32>(v);
  atomicStore(&state[1u + 2u * tile], (flag << 16u) | (b & 0xffffu));
  atomicStore(&state[2u + 2u * tile], (flag << 16u) | (b >> 16u));
}
fn reduceTile(tile: u32) -> ${t} {
  var acc = ${t}();
  let base = tile * ${RTS_TILE}u;
  for (var i = base; i < min(base + ${RTS_TILE}u, p.n); i++) { acc = acc + src[i]; }
  return acc;
}
fn lookBack(tile: u32, agg: ${t}) -> ${t} {
  var excl = ${t}();
  var j = i32(tile) - 1;
  var spins = 0u;
  loop {
    if (j < 0) { break; }
    let lo = atomicLoad(&state[1u + 2u * u32(j)]);
    let hi = atomicLoad(&state[2u + 2u * u32(j)]);
    let flag = lo >> 16u;
    if (flag != 0u && flag == (hi >> 16u)) {
      excl = bitcast<${t}>((lo & 0xffffu) | ((hi & 0xffffu) << 16u)) + excl;
      if (flag == 2u) { break; }
      j = j - 1; spins = 0u;
      continue;
    }
    spins = spins + 1u;
    if (spins > ${spin}u) { excl = reduceTile(u32(j)) + excl; j = j - 1; spins = 0u; }
  }
  return excl;
}`;
  const prefix = `if (li == 0u) {
    let agg = tot[255];
    if (tile == 0u) { publish(0u, 2u, agg); tileOffset = ${t}(); }
    else { publish(tile, 1u, agg); let e = lookBack(tile, agg); publish(tile, 2u, e + agg); tileOffset = e; }
  }`;
  const wgsl = `${tileScan(t, decls, prefix)}
@compute @workgroup_size(256) fn main(@builtin(local_invocation_index) li: u32) {
  if (li == 0u) { tileId = atomicAdd(&state[0], 1u); }
  let tile = workgroupUniformLoad(&tileId);
  // The folded grid (grid1d) launches up to 65 534 more workgroups than tiles. Those must leave:
  // publishing past the state array clobbered the last tile's flags (robustness clamps the
  // index), and every later tile then spun into the fallback: 400M elements took 909 ms.
  if (tile >= (p.n + ${RTS_TILE - 1}u) / ${RTS_TILE}u) { return; }
  tileBody(tile, li);
}`;
  return { name: 'scan-decoupled', cacheKey: `scan-decoupled-v2-${t}-${spin}`, workgroupSize: [256, 1, 1], wgsl };
}
