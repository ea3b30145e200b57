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
 * The tile scan of reduce-then-scan: the tile goes through workgroup
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
