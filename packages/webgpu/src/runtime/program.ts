/**
 * A compute program: WGSL source plus the key its compiled pipeline is cached under. The key
 * must name every constant baked into the source (tile sizes, k, dtype), nothing else.
 */
export interface Program {
  readonly name: string;
  readonly cacheKey: string;
  readonly workgroupSize: readonly [number, number, number];
  readonly wgsl: string;
}

export const wgAttr = (p: Pick<Program, 'workgroupSize'>): string => `@compute @workgroup_size(${p.workgroupSize.join(', ')})`;
