/**
 * Conv2d over output rows [rowStart, rowEnd) of the flattened (batch·height) row space.
 * Each output row is accumulated in f64 (`acc`, length >= width, owned by the caller so the
 * loop never allocates): for every filter tap the inner loop is a contiguous axpy over the
 * valid x range, which V8 compiles to tight code without per-pixel bounds checks.
 */
export function conv2dRows(
  input: Float32Array,
  filter: Float32Array,
  out: Float32Array,
  height: number,
  width: number,
  k: number,
  rowStart: number,
  rowEnd: number,
  acc: Float64Array,
): void {
  const r = (k - 1) >> 1;
  for (let row = rowStart; row < rowEnd; row++) {
    const b = (row / height) | 0;
    const y = row - b * height;
    acc.fill(0, 0, width);
    const iLo = Math.max(-r, -y);
    const iHi = Math.min(r, height - 1 - y);
    for (let i = iLo; i <= iHi; i++) {
      const inRow = (b * height + y + i) * width;
      const fRow = (i + r) * k + r;
      const jLo = Math.max(-r, -(width - 1));
      const jHi = Math.min(r, width - 1);
      for (let j = jLo; j <= jHi; j++) {
        const fv = filter[fRow + j]!;
        const xs = j < 0 ? -j : 0;
        const xe = j > 0 ? width - j : width;
        const base = inRow + j;
        for (let x = xs; x < xe; x++) acc[x]! += input[base + x]! * fv;
      }
    }
    const o = row * width;
    for (let x = 0; x < width; x++) out[o + x] = acc[x]!;
  }
}
