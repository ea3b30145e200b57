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

/** The maxComputeWorkgroupsPerDimension every WebGPU device has at least (the spec's default). */
export const MIN_WORKGROUPS_PER_DIMENSION = 65535;

/**
 * Workgroup counts for a 1-D job, folded into y when x would pass `maxPerDim` (the ops pass the
 * device's maxComputeWorkgroupsPerDimension; the default suits any device); the kernel recovers
 * the linear index (LINEAR_WG) and skips the spare workgroups of the last row.
 */
export function grid1d(workgroups: number, maxPerDim = MIN_WORKGROUPS_PER_DIMENSION): [number, number, number] {
  if (workgroups <= maxPerDim) return [Math.max(1, workgroups), 1, 1];
  const rows = Math.ceil(workgroups / maxPerDim);
  // Past maxPerDim² workgroups no buffer a kernel can bind is that large: a caller bug.
  if (rows > maxPerDim) throw new RangeError(`grid1d: ${workgroups} workgroups do not fold into ${maxPerDim}×${maxPerDim}`);
  return [maxPerDim, rows, 1];
}

/** WGSL line that turns a folded 1-D dispatch back into a linear workgroup index. */
export const LINEAR_WG = 'let wg = wid.x + wid.y * nwg.x;';

/** One dispatch of a larger grid: the kernel adds `offset` (in workgroups, per dimension) to its workgroup id. */
export interface GridPart {
  readonly offset: readonly [number, number, number];
  readonly workgroups: readonly [number, number, number];
}

/**
 * Cuts a 3-D grid of workgroups into dispatches of at most `maxPerDim` per dimension and at most
 * `maxGroups` workgroups each (z rows first, then y, then x, so parts stay as wide as they can).
 * A grid within both limits is one part at offset 0: the usual case costs nothing.
 */
export function gridParts(grid: readonly [number, number, number], maxPerDim: number, maxGroups = Infinity): GridPart[] {
  const [x, y, z] = grid.map((g) => Math.max(1, g)) as [number, number, number];
  const cap = Math.max(1, Math.floor(maxGroups));
  const sx = Math.min(x, maxPerDim, cap);
  const sy = Math.min(y, maxPerDim, Math.max(1, Math.floor(cap / sx)));
  const sz = Math.min(z, maxPerDim, Math.max(1, Math.floor(cap / (sx * sy))));
  const parts: GridPart[] = [];
  for (let oz = 0; oz < z; oz += sz) {
    for (let oy = 0; oy < y; oy += sy) {
      for (let ox = 0; ox < x; ox += sx) {
        parts.push({ offset: [ox, oy, oz], workgroups: [Math.min(sx, x - ox), Math.min(sy, y - oy), Math.min(sz, z - oz)] });
      }
    }
  }
  return parts;
}

/** Groups consecutive parts into submits of at most `maxGroups` workgroups (each part counts whole). */
export function submitsOf<T extends { readonly workgroups: readonly [number, number, number] }>(parts: readonly T[], maxGroups = Infinity): T[][] {
  const submits: T[][] = [];
  let current: T[] = [];
  let groups = 0;
  for (const part of parts) {
    const n = part.workgroups[0] * part.workgroups[1] * part.workgroups[2];
    if (current.length > 0 && groups + n > maxGroups) {
      submits.push(current);
      current = [];
      groups = 0;
    }
    current.push(part);
    groups += n;
  }
  if (current.length > 0) submits.push(current);
  return submits;
}
