// GPUBufferUsage / GPUMapMode values from the WebGPU spec. Dawn's Node bindings expose them only
// through `globals`, and installing those globals would touch globalThis for every importer.
export const BUF = {
  MAP_READ: 0x0001,
  MAP_WRITE: 0x0002,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
  QUERY_RESOLVE: 0x0200,
} as const;
export const MAP_READ = 0x0001;

/** Workgroup counts for a 1-D job, folded into y when x would pass the 65 535 limit. */
export function grid1d(workgroups: number, maxPerDim = 65535): [number, number, number] {
  if (workgroups <= maxPerDim) return [Math.max(1, workgroups), 1, 1];
  return [maxPerDim, Math.ceil(workgroups / maxPerDim), 1];
}

/** WGSL line that turns a folded 1-D dispatch back into a linear workgroup index. */
export const LINEAR_WG = 'let wg = wid.x + wid.y * nwg.x;';
