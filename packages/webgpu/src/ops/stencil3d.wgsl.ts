import type { Program } from '../runtime/program.js';

/** Shared declarations: ping-pong source/destination, sizes and coefficients in a uniform. */
const HEADER = `
struct P { nx: u32, ny: u32, nz: u32, copy: u32, c0: f32, c1: f32, pad0: u32, pad1: u32 }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
fn idx(x: i32, y: i32, z: i32) -> u32 { return u32((z * i32(p.ny) + y) * i32(p.nx) + x); }
fn interior(x: i32, y: i32, z: i32) -> bool {
  return x > 0 && y > 0 && z > 0 && x < i32(p.nx) - 1 && y < i32(p.ny) - 1 && z < i32(p.nz) - 1;
}
fn inside(x: i32, y: i32, z: i32) -> bool { return x >= 0 && y >= 0 && z >= 0 && x < i32(p.nx) && y < i32(p.ny) && z < i32(p.nz); }
// Boundary cells: 'zero' writes 0, 'copy' keeps the value (Dirichlet).
fn boundary(v: f32) -> f32 { return select(0.0, v, p.copy == 1u); }
`;

/** One thread per cell, every neighbour read from global memory. */
export function stencilNaive(): Program {
  const wgsl = `${HEADER}
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wid.x + wid.y * nwg.x) * 256u + li;
  if (i >= p.nx * p.ny * p.nz) { return; }
  let x = i32(i % p.nx); let y = i32((i / p.nx) % p.ny); let z = i32(i / (p.nx * p.ny));
  if (!interior(x, y, z)) { dst[i] = boundary(src[i]); return; }
  let nb = src[idx(x - 1, y, z)] + src[idx(x + 1, y, z)] + src[idx(x, y - 1, z)] + src[idx(x, y + 1, z)] + src[idx(x, y, z - 1)] + src[idx(x, y, z + 1)];
  dst[i] = p.c0 * src[i] + p.c1 * nb;
}`;
  return { name: 'stencil3d-naive', cacheKey: 'stencil3d-naive', workgroupSize: [256, 1, 1], wgsl };
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
  let x0 = i32(wid.x) * ${tx} - 1; let y0 = i32(wid.y) * ${ty} - 1; let z0 = i32(wid.z) * ${tz} - 1;
  for (var k = i32(li); k < ${X * Y * Z}; k += ${tx * ty * tz}) {
    let x = x0 + k % ${X}; let y = y0 + (k / ${X}) % ${Y}; let z = z0 + k / ${X * Y};
    var v = 0.0;
    if (inside(x, y, z)) { v = src[idx(x, y, z)]; }
    t[k] = v;
  }
  workgroupBarrier();
  let lx = i32(l.x) + 1; let ly = i32(l.y) + 1; let lz = i32(l.z) + 1;
  let x = x0 + lx; let y = y0 + ly; let z = z0 + lz;
  if (!inside(x, y, z)) { return; }
  let c = t[ti(lx, ly, lz)];
  if (!interior(x, y, z)) { dst[idx(x, y, z)] = boundary(c); return; }
  let nb = t[ti(lx - 1, ly, lz)] + t[ti(lx + 1, ly, lz)] + t[ti(lx, ly - 1, lz)] + t[ti(lx, ly + 1, lz)] + t[ti(lx, ly, lz - 1)] + t[ti(lx, ly, lz + 1)];
  dst[idx(x, y, z)] = p.c0 * c + p.c1 * nb;
}`;
  return { name: 'stencil3d-tiled', cacheKey: `stencil3d-tiled-${tx}x${ty}x${tz}`, workgroupSize: [tx, ty, tz], wgsl };
}

/**
 * 2.5-D streaming: a 32×8 column of threads marches ZB planes along z. z−1 and z+1 live in
 * registers, only the current plane (with its x/y halo) goes through workgroup memory, so
 * each input is read from global memory about once instead of seven times.
 */
export const STREAMED = { tx: 32, ty: 8, zb: 16 } as const;
export function stencilStreamed(): Program {
  const { tx, ty, zb } = STREAMED;
  const [X, Y] = [tx + 2, ty + 2];
  const wgsl = `${HEADER}
var<workgroup> pl: array<f32, ${X * Y}>;
fn ld(x: i32, y: i32, z: i32) -> f32 { if (inside(x, y, z)) { return src[idx(x, y, z)]; } return 0.0; }
@compute @workgroup_size(${tx}, ${ty}) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) l: vec3u, @builtin(local_invocation_index) li: u32) {
  let x0 = i32(wid.x) * ${tx} - 1; let y0 = i32(wid.y) * ${ty} - 1;
  let zs = i32(wid.z) * ${zb};
  let ze = min(zs + ${zb}, i32(p.nz));
  let lx = i32(l.x) + 1; let ly = i32(l.y) + 1;
  let x = x0 + lx; let y = y0 + ly;
  var below = ld(x, y, zs - 1);
  var cur = ld(x, y, zs);
  for (var z = zs; z < ze; z++) {
    let above = ld(x, y, z + 1);
    // The current plane and its halo: the 34×10 cells loaded cooperatively.
    for (var k = i32(li); k < ${X * Y}; k += ${tx * ty}) { pl[k] = ld(x0 + k % ${X}, y0 + k / ${X}, z); }
    workgroupBarrier();
    if (inside(x, y, z)) {
      var v: f32;
      if (interior(x, y, z)) {
        let nb = pl[ly * ${X} + lx - 1] + pl[ly * ${X} + lx + 1] + pl[(ly - 1) * ${X} + lx] + pl[(ly + 1) * ${X} + lx] + below + above;
        v = p.c0 * cur + p.c1 * nb;
      } else {
        v = boundary(cur);
      }
      dst[idx(x, y, z)] = v;
    }
    workgroupBarrier();
    below = cur;
    cur = above;
  }
}`;
  return { name: 'stencil3d-streamed', cacheKey: `stencil3d-streamed-${tx}x${ty}x${zb}`, workgroupSize: [tx, ty, 1], wgsl };
}
