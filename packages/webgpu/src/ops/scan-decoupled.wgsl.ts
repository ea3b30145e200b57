import type { Program } from '../runtime/program.js';
import type { WgslScalar } from './scan.wgsl.js';

/** Invocations per workgroup of the vectorised decoupled scan. */
export const DECOUPLED_WG = 256;

/**
 * How the vectorised decoupled-look-back scan is built. Both forms share tiling, data layout,
 * look-back and fallback; they differ only in how a "subgroup" scans its rows:
 * - `'native'`: WGSL subgroup builtins (`enable subgroups;`), any subgroup size the device picks;
 * - a number `S`: a software subgroup of `S` consecutive invocations whose scans run in
 *   workgroup memory (Hillis–Steele). The form for adapters without subgroups, the one the
 *   software adapter tests (S = 4…128 mirrors the sizes real subgroups have), and variant
 *   `decoupled` (S = 32; the configurations and their H100 numbers are in scan-decoupled.ts).
 */
export interface DecoupledConfig {
  /** vec4 loads per invocation; a tile is wg · 4 · vecs elements. */
  readonly vecs: number;
  /** Invocations per workgroup; default DECOUPLED_WG (256). A power of two ≥ the software subgroup size. */
  readonly wg?: number;
  readonly subgroups: 'native' | number;
  /** Predecessor tiles inspected per look-back step (one invocation each). */
  readonly window: number;
  /** Look-back steps without progress before the tile reduces the predecessor from the input itself. */
  readonly spin: number;
  /**
   * How a workgroup gets its tile; default true. true: an atomic ticket, in the order workgroups
   * start, so a tile only waits on tiles that already run. false: the workgroup id (no atomic
   * round trip before the loads; a tile may wait on one not yet scheduled, which the fallback covers).
   * On the H100 false is faster in the native form and no faster in the software one (webgpu-steady-sweep-h100-*.log).
   */
  readonly ticket?: boolean;
  /**
   * Fault injection for tests; default 'all'. 'none': tiles publish nothing, so every tile must
   * reduce all its predecessors through the fallback (the path only a stalled predecessor takes).
   * 'aggregates': only tile 0 publishes an inclusive prefix, so every look-back sums aggregates
   * window after window down to tile 0 (the path taken while predecessors are still looking back).
   */
  readonly publish?: 'all' | 'none' | 'aggregates';
}

export const tileElements = (cfg: Pick<DecoupledConfig, 'vecs' | 'wg'>): number => (cfg.wg ?? DECOUPLED_WG) * 4 * cfg.vecs;

/** Per-row code: `rows(V, r => ...)` repeats a snippet with the literal row index (no private-array indexing on the hot path). */
const rows = (v: number, f: (r: number) => string): string => Array.from({ length: v }, (_, r) => f(r)).join('\n  ');

/**
 * Single-pass scan with decoupled look-back (Merrill & Garland) over tiles of 256·4·V elements.
 *
 * Layout: each subgroup owns a contiguous segment of its tile (cnt·V vec4s) and loads it as V
 * coalesced rows of `cnt` vec4s (row r, lane l ↔ vec4 seg + r·cnt + l). Within a row each lane
 * scans its vec4 serially; the V row totals of a lane are scanned across the subgroup (native
 * subgroupExclusiveAdd or the workgroup-memory emulation) and chained row after row, giving each
 * lane its offset inside the segment and each subgroup its total. Software subgroups are
 * consecutive invocations. Native ones claim their segments through one workgroup atomic
 * ((1 << 16) | lane count per subgroup), so the order of segments equals the order of subgroup
 * totals whatever the device's invocation→subgroup mapping and subgroup size (even unequal
 * ones): nothing assumes subgroups are consecutive or full.
 *
 * Look-back: the tile publishes its aggregate (flag 1), then `window` invocations read that many
 * predecessors at once; the nearest non-aggregate entry stops the window: an inclusive prefix
 * (flag 2) ends the look-back, a missing one (flag 0) consumes the aggregates before it and polls
 * again. After `spin` polls without progress the whole workgroup reduces the missing tile from the
 * input (forward progress never depends on the scheduler). A 32-bit value and its flag do not fit
 * one atomic, so each state entry is two atomics of (flag << 16 | 16-bit half); a reader accepts
 * an entry only when both halves carry the same flag.
 *
 * Carry: tile 0's exclusive prefix is `carry[inSlot]` (raw bits), so every prefix includes it; the
 * invocation holding element n−1 writes that element's inclusive value to `carry[outSlot]`. The
 * streaming scan chains chunks through it without a CPU round-trip.
 */
export function decoupledVecScan(t: WgslScalar, cfg: DecoupledConfig): Program {
  const { vecs: V, window: W, spin } = cfg;
  const native = cfg.subgroups === 'native';
  const ES = native ? 0 : (cfg.subgroups as number);
  const publish = cfg.publish ?? 'all';
  const ticket = cfg.ticket ?? true;
  const store = `let b = bitcast<u32>(v);
  atomicStore(&state[1u + 2u * tile], (flag << 16u) | (b & 0xffffu));
  atomicStore(&state[2u + 2u * tile], (flag << 16u) | (b >> 16u));`;
  const publishBody =
    publish === 'none'
      ? '// publishing disabled (fault injection for tests)'
      : publish === 'aggregates'
        ? `if (flag == 2u && tile != 0u) { return; } // fault injection for tests\n  ${store}`
        : store;
  const WG = cfg.wg ?? DECOUPLED_WG;

  // Subgroup identity: k = rank of this subgroup's segment, slot = its first invocation position,
  // rank = lane position inside the segment, cnt = lanes in the subgroup.
  const ident = native
    ? `let cnt = subgroupAdd(1u);
  let rank = subgroupExclusiveAdd(1u);
  var claim = 0u;
  if (rank == 0u) { claim = atomicAdd(&sgCounter, (1u << 16u) | cnt); }
  let claimed = subgroupBroadcastFirst(claim);
  let k = claimed >> 16u;
  let slot = claimed & 0xffffu;`
    : `let cnt = ${ES}u;
  let rank = li % ${ES}u;
  let k = li / ${ES}u;
  let slot = k * ${ES}u;`;

  // Exclusive scan of each row total across the subgroup, chained over the rows; `run` ends as the subgroup's total.
  const rowScan = native
    ? `var run = ${t}();
  ${rows(V, (r) => `let q${r} = run + subgroupExclusiveAdd(t${r}); run = run + subgroupAdd(t${r});`)}`
    : `${rows(V, (r) => `var v${r} = t${r}; emu[${r}u * WG + li] = v${r};`)}
  for (var d = 1u; d < ${ES}u; d = d << 1u) {
    workgroupBarrier();
    // One scalar per row with an explicit initialiser: a \`var a: array<…>\` declared without one in
    // this loop keeps the previous iteration's values on Dawn/Vulkan (H100), and reading through a
    // select()ed index gives wrong sums on llvmpipe. This form is right on both.
    ${rows(V, (r) => `var n${r} = ${t}();`)}
    if (rank >= d) {
      ${rows(V, (r) => `n${r} = emu[${r}u * WG + li - d];`)}
    }
    workgroupBarrier();
    ${rows(V, (r) => `v${r} = v${r} + n${r}; emu[${r}u * WG + li] = v${r};`)}
  }
  workgroupBarrier();
  let last = k * ${ES}u + ${ES - 1}u;
  let prev = max(li, 1u) - 1u;
  var run = ${t}();
  ${rows(V, (r) => `let q${r} = run + select(${t}(), emu[${r}u * WG + prev], rank > 0u); run = run + emu[${r}u * WG + last];`)}`;

  const nsg = native ? 'atomicLoad(&sgCounter) >> 16u' : `${WG / ES}u`;

  const wgsl = `${native ? 'enable subgroups;\n' : ''}struct P { n: u32, n4: u32, inSlot: u32, outSlot: u32, inclusive: u32, tiles: u32, pad0: u32, pad1: u32 }
@group(0) @binding(0) var<storage, read> src: array<vec4<${t}>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<${t}>>;
@group(0) @binding(2) var<uniform> p: P;
@group(0) @binding(3) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> carry: array<u32>;

const WG = ${WG}u;
const V = ${V}u;
const TILE4 = ${WG * V}u;
const W = ${W}u;
const LOOK = 0u;
const DONE = 1u;
const FALLBACK = 2u;

var<workgroup> wgTile: u32;
${native ? 'var<workgroup> sgCounter: atomic<u32>;' : `var<workgroup> emu: array<${t}, ${V * WG}>;`}
var<workgroup> wtot: array<${t}, ${WG}>;
var<workgroup> red: array<${t}, ${WG}>;
var<workgroup> lbVal: array<${t}, ${W}>;
var<workgroup> lbFlag: array<u32, ${W}>;
var<workgroup> lbStop: atomic<u32>;
var<workgroup> lbCmd: u32;
var<workgroup> lbExcl: ${t};

// vec4 i4 of the input; lanes past n read as 0 (buffers are padded to 16 bytes, the padding is stale).
fn ld(i4: u32) -> vec4<${t}> {
  if (i4 >= p.n4) { return vec4<${t}>(); }
  let e = vec4u(i4 * 4u) + vec4u(0u, 1u, 2u, 3u);
  return select(vec4<${t}>(), src[i4], e < vec4u(p.n));
}

fn publishState(tile: u32, flag: u32, v: ${t}) {
  ${publishBody}
}

// Fallback: the whole workgroup reduces tile \`tile\` from the input (any order: the sum is all that is needed).
fn tileSum(tile: u32, li: u32) -> ${t} {
  let b4 = tile * TILE4;
  var s = ${t}();
  for (var r = 0u; r < V; r++) { let x = ld(b4 + r * WG + li); s = s + ((x.x + x.y) + (x.z + x.w)); }
  red[li] = s;
  for (var d = WG / 2u; d > 0u; d = d >> 1u) {
    workgroupBarrier();
    if (li < d) { red[li] = red[li] + red[li + d]; }
  }
  workgroupBarrier();
  return red[0];
}

@compute @workgroup_size(${WG}) fn main(@builtin(local_invocation_index) li: u32${ticket ? '' : ', @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u'}) {
  // The subgroup claims (native) run while the ticket's round trip is in flight: the loads can
  // start right after the tile is known. sgCounter relies on WGSL zero-initialising workgroup memory.
  ${ticket ? `if (li == 0u) { wgTile = atomicAdd(&state[0], 1u); }` : ''}
  ${ident}
  let tile = ${ticket ? 'workgroupUniformLoad(&wgTile)' : 'wid.x + wid.y * nwg.x'};
  // Spare workgroups of a folded grid leave before touching anything.
  if (tile >= p.tiles) { return; }
  let seg = tile * TILE4 + slot * V;
  ${rows(V, (r) => `let x${r} = ld(seg + ${r}u * cnt + rank);`)}
  ${rows(V, (r) => `let a${r} = x${r}.x; let b${r} = a${r} + x${r}.y; let c${r} = b${r} + x${r}.z; let t${r} = c${r} + x${r}.w;`)}
  ${rowScan}
  if (rank == 0u) { wtot[k] = run; }
  workgroupBarrier();
  let nsg = ${nsg};
  var pre = ${t}();
  var agg = ${t}();
  for (var j = 0u; j < nsg; j++) { if (j == k) { pre = agg; } agg = agg + wtot[j]; }

  var excl = ${t}();
  var spins = 0u;
  if (li == 0u) {
    if (tile == 0u) {
      let c = bitcast<${t}>(carry[p.inSlot]);
      publishState(0u, 2u, c + agg);
      lbExcl = c;
      lbCmd = DONE << 30u;
    } else {
      publishState(tile, 1u, agg);
      atomicStore(&lbStop, W);
      lbCmd = tile;
    }
  }
  // Every branch below depends only on lbCmd, read through workgroupUniformLoad: the loop is
  // workgroup-uniform, so the barriers inside it are legal. Invocation 0 keeps the running sum.
  loop {
    let cmd = workgroupUniformLoad(&lbCmd);
    let mode = cmd >> 30u;
    let cur = cmd & 0x3fffffffu;
    if (mode == DONE) { break; }
    if (mode == FALLBACK) {
      let s = tileSum(cur, li);
      if (li == 0u) {
        excl = s + excl;
        spins = 0u;
        if (cur == 0u) {
          excl = bitcast<${t}>(carry[p.inSlot]) + excl;
          publishState(tile, 2u, excl + agg);
          lbExcl = excl;
          lbCmd = DONE << 30u;
        } else { lbCmd = cur; }
      }
      continue;
    }
    // LOOK: invocation i reads predecessor cur-1-i.
    if (li < W && li < cur) {
      let j = cur - 1u - li;
      let lo = atomicLoad(&state[1u + 2u * j]);
      let hi = atomicLoad(&state[2u + 2u * j]);
      let f = lo >> 16u;
      let flag = select(0u, f, f == (hi >> 16u));
      lbVal[li] = bitcast<${t}>((lo & 0xffffu) | (hi << 16u));
      lbFlag[li] = flag;
      if (flag != 1u) { atomicMin(&lbStop, li); }
    }
    workgroupBarrier();
    if (li == 0u) {
      // Tile 0 never publishes an aggregate, so a window reaching it always stops (stop < cur).
      let stop = atomicLoad(&lbStop);
      atomicStore(&lbStop, W);
      for (var i = 0u; i < stop; i++) { excl = excl + lbVal[i]; }
      if (stop < W && lbFlag[stop] == 2u) {
        excl = excl + lbVal[stop];
        publishState(tile, 2u, excl + agg);
        lbExcl = excl;
        lbCmd = DONE << 30u;
      } else {
        let next = cur - stop;
        spins = select(0u, spins + 1u, stop == 0u);
        lbCmd = select(next, (FALLBACK << 30u) | (next - 1u), spins > ${spin}u);
      }
    }
  }

  let base = lbExcl + pre;
  ${rows(
    V,
    (r) => `{
    let i4 = seg + ${r}u * cnt + rank;
    let o = base + q${r};
    let inc = vec4<${t}>(o + a${r}, o + b${r}, o + c${r}, o + t${r});
    if (i4 < p.n4) {
      if (p.inclusive == 1u) { dst[i4] = inc; } else { dst[i4] = vec4<${t}>(o, inc.x, inc.y, inc.z); }
      if (i4 == p.n4 - 1u) { carry[p.outSlot] = bitcast<u32>(inc[(p.n - 1u) % 4u]); }
    }
  }`,
  )}
}`;
  const form = native ? 'sg' : `emu${ES}`;
  return {
    name: `scan-decoupled-vec-${form}`,
    cacheKey: `scan-decoupled-vec-${t}-wg${WG}-v${V}-${form}-w${W}-s${spin}${ticket ? '' : '-wgid'}${publish === 'all' ? '' : `-publish-${publish}`}`,
    workgroupSize: [WG, 1, 1],
    wgsl,
  };
}
