import type { Program } from '../runtime/program.js';

/**
 * Shared declarations: ping-pong source/destination, sizes and coefficients in a uniform, with
 * the offset (in workgroups) of this dispatch's part of the grid (runtime/usage.ts gridParts).
 * The buffers may hold one z-slab of a larger grid (stencil3d.ts): `nz` planes starting at
 * global plane `zoff` of a grid of `gnz` planes, with halo planes (read, never written) around
 * the planes the slab owns, local [zlo, zhi). The whole grid in one buffer is zoff = zlo = 0, gnz = zhi = nz.
 */
const HEADER = `
struct P { nx: u32, ny: u32, nz: u32, copy: u32, c0: f32, c1: f32, ox: u32, oy: u32, oz: u32, zoff: u32, gnz: u32, zlo: u32, zhi: u32, pad0: u32, pad1: u32, pad2: u32 }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
fn idx(x: i32, y: i32, z: i32) -> u32 { return u32((z * i32(p.ny) + y) * i32(p.nx) + x); }
// z is local; the grid's boundary planes are global ones.
fn interior(x: i32, y: i32, z: i32) -> bool {
  let gz = z + i32(p.zoff);
  return x > 0 && y > 0 && gz > 0 && x < i32(p.nx) - 1 && y < i32(p.ny) - 1 && gz < i32(p.gnz) - 1;
}
// Whether local plane z is one this slab writes (not a halo plane).
fn owned(z: i32) -> bool { return z >= i32(p.zlo) && z < i32(p.zhi); }
fn inside(x: i32, y: i32, z: i32) -> bool { return x >= 0 && y >= 0 && z >= 0 && x < i32(p.nx) && y < i32(p.ny) && z < i32(p.nz); }
// Boundary cells: 'zero' writes 0, 'copy' keeps the value (Dirichlet).
fn boundary(v: f32) -> f32 { return select(0.0, v, p.copy == 1u); }
`;

/** One thread per cell, every neighbour read from global memory. */
export function stencilNaive(): Program {
  const wgsl = `${HEADER}
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wid.x + p.ox) * 256u + li;
  if (i >= p.nx * p.ny * p.nz) { return; }
  let x = i32(i % p.nx); let y = i32((i / p.nx) % p.ny); let z = i32(i / (p.nx * p.ny));
  if (!owned(z)) { return; }
  if (!interior(x, y, z)) { dst[i] = boundary(src[i]); return; }
  let nb = src[idx(x - 1, y, z)] + src[idx(x + 1, y, z)] + src[idx(x, y - 1, z)] + src[idx(x, y + 1, z)] + src[idx(x, y, z - 1)] + src[idx(x, y, z + 1)];
  dst[i] = p.c0 * src[i] + p.c1 * nb;
}`;
  return { name: 'stencil3d-naive', cacheKey: 'stencil3d-naive-slabs', workgroupSize: [256, 1, 1], wgsl };
}

/** A 32×4×2 block with a one-cell halo in workgroup memory: each input is read once per block. */
export const TILED = { tx: 32, ty: 4, tz: 2 } as const;
export function stencilTiled(): Program {
  const { tx, ty, tz } = TILED;
  const [X, Y, Z] = [tx + 2, ty + 2, tz + 2];
  const wgsl = `${HEADER}
var<workgroup> t: array<f32, ${X * Y * Z}>;
fn ti(x: i32, y: i32, z: i32) -> i32 { return (z * ${Y} + y) * ${X} + x; }
@compute @workgroup_size(${tx}, ${ty}, ${tz}) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) l: vec3u, @builtin(local_invocation_index) li: u32) {
  let x0 = i32(wid.x + p.ox) * ${tx} - 1; let y0 = i32(wid.y + p.oy) * ${ty} - 1; let z0 = i32(wid.z + p.oz) * ${tz} - 1;
  for (var k = i32(li); k < ${X * Y * Z}; k += ${tx * ty * tz}) {
    let x = x0 + k % ${X}; let y = y0 + (k / ${X}) % ${Y}; let z = z0 + k / ${X * Y};
    var v = 0.0;
    if (inside(x, y, z)) { v = src[idx(x, y, z)]; }
    t[k] = v;
  }
  workgroupBarrier();
  let lx = i32(l.x) + 1; let ly = i32(l.y) + 1; let lz = i32(l.z) + 1;
  let x = x0 + lx; let y = y0 + ly; let z = z0 + lz;
  if (!inside(x, y, z) || !owned(z)) { return; }
  let c = t[ti(lx, ly, lz)];
  if (!interior(x, y, z)) { dst[idx(x, y, z)] = boundary(c); return; }
  let nb = t[ti(lx - 1, ly, lz)] + t[ti(lx + 1, ly, lz)] + t[ti(lx, ly - 1, lz)] + t[ti(lx, ly + 1, lz)] + t[ti(lx, ly, lz - 1)] + t[ti(lx, ly, lz + 1)];
  dst[idx(x, y, z)] = p.c0 * c + p.c1 * nb;
}`;
  return { name: 'stencil3d-tiled', cacheKey: `stencil3d-tiled-slabs-${tx}x${ty}x${tz}`, workgroupSize: [tx, ty, tz], wgsl };
}

/**
 * 2.5-D streaming: each thread of a 32×8 column marches ZB planes along z with z−1, z and z+1 in
 * registers (each plane value is loaded once per thread and reused three times). The four x/y
 * neighbours come straight from global memory: neighbouring threads load the same lines, so
 * they hit L1. No barrier at all: staging every plane through workgroup memory costs two
 * barriers per plane and ran slower than naive on the H100.
 */
export const STREAMED = { tx: 32, ty: 8, zb: 16 } as const;
export function stencilStreamed(): Program {
  const { tx, ty, zb } = STREAMED;
  const wgsl = `${HEADER}
@compute @workgroup_size(${tx}, ${ty}) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) l: vec3u) {
  let g = (wid + vec3u(p.ox, p.oy, p.oz)) * vec3u(${tx}u, ${ty}u, 1u) + l;
  let nx = i32(p.nx); let ny = i32(p.ny); let nz = i32(p.nz);
  let x = i32(g.x); let y = i32(g.y);
  if (x >= nx || y >= ny) { return; }
  let zs = i32(g.z) * ${zb};
  let ze = min(zs + ${zb}, nz);
  let plane = nx * ny;
  let edge = x == 0 || y == 0 || x == nx - 1 || y == ny - 1;
  let gz0 = i32(p.zoff); let gnz = i32(p.gnz);
  var i = zs * plane + y * nx + x;
  var below = 0.0;
  if (zs > 0) { below = src[u32(i - plane)]; }
  var cur = src[u32(i)];
  for (var z = zs; z < ze; z++) {
    var above = 0.0;
    if (z + 1 < nz) { above = src[u32(i + plane)]; }
    if (!owned(z)) {
    } else if (edge || gz0 + z == 0 || gz0 + z == gnz - 1) {
      dst[u32(i)] = boundary(cur);
    } else {
      let nb = src[u32(i - 1)] + src[u32(i + 1)] + src[u32(i - nx)] + src[u32(i + nx)] + below + above;
      dst[u32(i)] = p.c0 * cur + p.c1 * nb;
    }
    below = cur;
    cur = above;
    i += plane;
  }
}`;
  return { name: 'stencil3d-streamed', cacheKey: `stencil3d-streamed-slabs-${tx}x${ty}x${zb}`, workgroupSize: [tx, ty, 1], wgsl };
}
