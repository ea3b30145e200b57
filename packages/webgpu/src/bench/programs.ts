/** Kernels the bench scripts share. */
import type { Program } from '../runtime/program.js';

/** dst[i] = src[i] over `n` (uniform word 0) f32 or vec4<f32>: the bandwidth ceiling the ops are compared with. */
export const copyProgram = (vec: boolean, wg: number): Program => {
  const t = vec ? 'vec4f' : 'f32';
  return {
    name: `copy-${t}-${wg}`,
    cacheKey: `copy-${t}-${wg}`,
    workgroupSize: [wg, 1, 1],
    wgsl: `struct P { n: u32, a: u32, b: u32, c: u32 }
@group(0) @binding(0) var<storage, read> src: array<${t}>;
@group(0) @binding(1) var<storage, read_write> dst: array<${t}>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(${wg}) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wid.x + wid.y * nwg.x) * ${wg}u + li;
  if (i < p.n) { dst[i] = src[i]; }
}`,
  };
};
