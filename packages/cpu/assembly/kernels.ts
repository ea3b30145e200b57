// WebAssembly SIMD kernels for the CPU backends. They see only linear memory: the TypeScript
// side (src/wasm/) lays the operands out, copies them in and out, and bands large inputs.
// Built twice by `npm run build`: plain SIMD (f32x4.mul + f32x4.add) and, for runtimes that
// validate it, relaxed SIMD (f32x4.relaxed_madd, a fused multiply-add where the CPU has one).

// @ts-ignore: decorator
@inline function madd(a: v128, b: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(a, b, c);
  return f32x4.add(f32x4.mul(a, b), c);
}

// @ts-ignore: decorator
@inline function maddF64(a: v128, b: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f64x2.relaxed_madd(a, b, c);
  return f64x2.add(f64x2.mul(a, b), c);
}

/** Stores the first `n` (0..4) lanes of `v` at `p`. */
// @ts-ignore: decorator
@inline function storeLanes(p: usize, v: v128, n: i32): void {
  if (n >= 4) v128.store(p, v);
  else if (n == 3) {
    v128.store64_lane(p, v, 0);
    v128.store32_lane(p, v, 2, 8);
  } else if (n == 2) v128.store64_lane(p, v, 0);
  else if (n == 1) v128.store32_lane(p, v, 0);
}

/**
 * conv2d ('same', zero padding) of one zero-padded band. `inp` holds the band's input rows with
 * r = (k−1)/2 zero rows above and below (plus 2 more below), r zero columns on the left and at
 * least 8 + r on the right, `inStride` floats apart; output row y, column x reads
 * inp[(y + i)·inStride + x + j] · filter[i·k + j]. Writes `rows` × `width` floats at `out`
 * (row stride `width`, nothing past the last row's end). Register tile: 3 rows × 8 pixels, whose
 * 6 input vectors, 6 accumulators and the broadcast tap fit V8's 15 vector registers (V8 loads
 * all of a tap's inputs before the arithmetic, so 4 rows spilled).
 */
export function conv2d(inp: usize, inStride: i32, filter: usize, k: i32, out: usize, rows: i32, width: i32): void {
  const s = (<usize>inStride) << 2;
  for (let y = 0; y < rows; y += 3) {
    const rowsHere = min(3, rows - y);
    for (let x = 0; x < width; x += 8) {
      let a0 = f32x4.splat(0), b0 = f32x4.splat(0);
      let a1 = f32x4.splat(0), b1 = f32x4.splat(0);
      let a2 = f32x4.splat(0), b2 = f32x4.splat(0);
      let f = filter;
      let row = inp + ((<usize>(y * inStride + x)) << 2);
      for (let i = 0; i < k; i++) {
        let p = row;
        const fEnd = f + ((<usize>k) << 2);
        while (f < fEnd) {
          const w = v128.load32_splat(f);
          a0 = madd(v128.load(p), w, a0);
          b0 = madd(v128.load(p, 16), w, b0);
          const p1 = p + s;
          a1 = madd(v128.load(p1), w, a1);
          b1 = madd(v128.load(p1, 16), w, b1);
          const p2 = p1 + s;
          a2 = madd(v128.load(p2), w, a2);
          b2 = madd(v128.load(p2, 16), w, b2);
          p += 4;
          f += 4;
        }
        row += s;
      }
      const cols = width - x;
      let o = out + ((<usize>(y * width + x)) << 2);
      const wb = (<usize>width) << 2;
      if (cols >= 8) {
        v128.store(o, a0); v128.store(o, b0, 16);
        if (rowsHere > 1) { o += wb; v128.store(o, a1); v128.store(o, b1, 16); }
        if (rowsHere > 2) { o += wb; v128.store(o, a2); v128.store(o, b2, 16); }
      } else {
        storeLanes(o, a0, cols); storeLanes(o + 16, b0, cols - 4);
        if (rowsHere > 1) { o += wb; storeLanes(o, a1, cols); storeLanes(o + 16, b1, cols - 4); }
        if (rowsHere > 2) { o += wb; storeLanes(o, a2, cols); storeLanes(o + 16, b2, cols - 4); }
      }
    }
  }
}

/**
 * One register tile of the conv layer: 4 maps × `vectors` (1 or 2, a compile-time constant
 * after inlining) vectors of 4 pixels of one output row, all C·k·k taps, bias and ReLU fused.
 * Stores the first `cols` pixels of each map. Two vectors (8 accumulators, 2 input vectors and
 * 4 weight vectors) is the widest tile V8 keeps in registers; a wider one spills accumulators.
 * `w`: this tile's maps in the layout `tapsPerRow` describes.
 */
// @ts-ignore: decorator
@inline function convLayerTile(
  vectors: i32, chan: usize, channels: i32, k: i32, rowBytes: usize, chanBytes: usize, w: usize,
  bias: usize, relu: bool, o: usize, plane: usize, mapsHere: i32, cols: i32,
): void {
  const bv0 = v128.load32_splat(bias);
  const bv1 = v128.load32_splat(bias, 4);
  const bv2 = v128.load32_splat(bias, 8);
  const bv3 = v128.load32_splat(bias, 12);
  let a0 = bv0, b0 = bv0;
  let a1 = bv1, b1 = bv1;
  let a2 = bv2, b2 = bv2;
  let a3 = bv3, b3 = bv3;
  let i0: v128, i1: v128, wv: v128;
  if (k <= 8) {
    // A row of taps unrolled, each tap past the first behind a branch on k: V8 then keeps each
    // tap's loads next to its arithmetic (straight-line code gets every load first and spills),
    // addresses are constant offsets, and no counter or loop exit runs per tap.
    for (let c = 0; c < channels; c++) {
      let q = chan;
      for (let p = 0; p < k; p++) {
        i0 = v128.load(q, 0); i1 = vectors > 1 ? v128.load(q, 16) : i0;
        wv = v128.load(w, 0); a0 = madd(i0, wv, a0); if (vectors > 1) b0 = madd(i1, wv, b0);
        wv = v128.load(w, 16); a1 = madd(i0, wv, a1); if (vectors > 1) b1 = madd(i1, wv, b1);
        wv = v128.load(w, 32); a2 = madd(i0, wv, a2); if (vectors > 1) b2 = madd(i1, wv, b2);
        wv = v128.load(w, 48); a3 = madd(i0, wv, a3); if (vectors > 1) b3 = madd(i1, wv, b3);
        if (k > 1) {
          i0 = v128.load(q, 4); i1 = vectors > 1 ? v128.load(q, 20) : i0;
          wv = v128.load(w, 64); a0 = madd(i0, wv, a0); if (vectors > 1) b0 = madd(i1, wv, b0);
          wv = v128.load(w, 80); a1 = madd(i0, wv, a1); if (vectors > 1) b1 = madd(i1, wv, b1);
          wv = v128.load(w, 96); a2 = madd(i0, wv, a2); if (vectors > 1) b2 = madd(i1, wv, b2);
          wv = v128.load(w, 112); a3 = madd(i0, wv, a3); if (vectors > 1) b3 = madd(i1, wv, b3);
        }
        if (k > 2) {
          i0 = v128.load(q, 8); i1 = vectors > 1 ? v128.load(q, 24) : i0;
          wv = v128.load(w, 128); a0 = madd(i0, wv, a0); if (vectors > 1) b0 = madd(i1, wv, b0);
          wv = v128.load(w, 144); a1 = madd(i0, wv, a1); if (vectors > 1) b1 = madd(i1, wv, b1);
          wv = v128.load(w, 160); a2 = madd(i0, wv, a2); if (vectors > 1) b2 = madd(i1, wv, b2);
          wv = v128.load(w, 176); a3 = madd(i0, wv, a3); if (vectors > 1) b3 = madd(i1, wv, b3);
        }
        if (k > 3) {
          i0 = v128.load(q, 12); i1 = vectors > 1 ? v128.load(q, 28) : i0;
          wv = v128.load(w, 192); a0 = madd(i0, wv, a0); if (vectors > 1) b0 = madd(i1, wv, b0);
          wv = v128.load(w, 208); a1 = madd(i0, wv, a1); if (vectors > 1) b1 = madd(i1, wv, b1);
          wv = v128.load(w, 224); a2 = madd(i0, wv, a2); if (vectors > 1) b2 = madd(i1, wv, b2);
          wv = v128.load(w, 240); a3 = madd(i0, wv, a3); if (vectors > 1) b3 = madd(i1, wv, b3);
        }
        if (k > 4) {
          i0 = v128.load(q, 16); i1 = vectors > 1 ? v128.load(q, 32) : i0;
          wv = v128.load(w, 256); a0 = madd(i0, wv, a0); if (vectors > 1) b0 = madd(i1, wv, b0);
          wv = v128.load(w, 272); a1 = madd(i0, wv, a1); if (vectors > 1) b1 = madd(i1, wv, b1);
          wv = v128.load(w, 288); a2 = madd(i0, wv, a2); if (vectors > 1) b2 = madd(i1, wv, b2);
          wv = v128.load(w, 304); a3 = madd(i0, wv, a3); if (vectors > 1) b3 = madd(i1, wv, b3);
        }
        if (k > 5) {
          i0 = v128.load(q, 20); i1 = vectors > 1 ? v128.load(q, 36) : i0;
          wv = v128.load(w, 320); a0 = madd(i0, wv, a0); if (vectors > 1) b0 = madd(i1, wv, b0);
          wv = v128.load(w, 336); a1 = madd(i0, wv, a1); if (vectors > 1) b1 = madd(i1, wv, b1);
          wv = v128.load(w, 352); a2 = madd(i0, wv, a2); if (vectors > 1) b2 = madd(i1, wv, b2);
          wv = v128.load(w, 368); a3 = madd(i0, wv, a3); if (vectors > 1) b3 = madd(i1, wv, b3);
        }
        if (k > 6) {
          i0 = v128.load(q, 24); i1 = vectors > 1 ? v128.load(q, 40) : i0;
          wv = v128.load(w, 384); a0 = madd(i0, wv, a0); if (vectors > 1) b0 = madd(i1, wv, b0);
          wv = v128.load(w, 400); a1 = madd(i0, wv, a1); if (vectors > 1) b1 = madd(i1, wv, b1);
          wv = v128.load(w, 416); a2 = madd(i0, wv, a2); if (vectors > 1) b2 = madd(i1, wv, b2);
          wv = v128.load(w, 432); a3 = madd(i0, wv, a3); if (vectors > 1) b3 = madd(i1, wv, b3);
        }
        if (k > 7) {
          i0 = v128.load(q, 28); i1 = vectors > 1 ? v128.load(q, 44) : i0;
          wv = v128.load(w, 448); a0 = madd(i0, wv, a0); if (vectors > 1) b0 = madd(i1, wv, b0);
          wv = v128.load(w, 464); a1 = madd(i0, wv, a1); if (vectors > 1) b1 = madd(i1, wv, b1);
          wv = v128.load(w, 480); a2 = madd(i0, wv, a2); if (vectors > 1) b2 = madd(i1, wv, b2);
          wv = v128.load(w, 496); a3 = madd(i0, wv, a3); if (vectors > 1) b3 = madd(i1, wv, b3);
        }
        q += rowBytes;
        w += 512;
      }
      chan += chanBytes;
    }
  } else {
    const tapRow = (<usize>k) << 2;
    for (let c = 0; c < channels; c++) {
      let row = chan;
      for (let p = 0; p < k; p++) {
        let q = row;
        const qEnd = row + tapRow;
        while (q < qEnd) {
          i0 = v128.load(q, 0); i1 = vectors > 1 ? v128.load(q, 16) : i0;
          wv = v128.load(w); a0 = madd(i0, wv, a0); if (vectors > 1) b0 = madd(i1, wv, b0);
          wv = v128.load(w, 16); a1 = madd(i0, wv, a1); if (vectors > 1) b1 = madd(i1, wv, b1);
          wv = v128.load(w, 32); a2 = madd(i0, wv, a2); if (vectors > 1) b2 = madd(i1, wv, b2);
          wv = v128.load(w, 48); a3 = madd(i0, wv, a3); if (vectors > 1) b3 = madd(i1, wv, b3);
          q += 4;
          w += 64;
        }
        row += rowBytes;
      }
      chan += chanBytes;
    }
  }
  if (relu) {
    // pmax(v, 0) = v < 0 ? 0 : v, one instruction where max is several (for its NaN and ±0
    // rules); it keeps NaN as NaN, like the reference's ReLU, and −0 as −0, equal to its 0.
    const zero = f32x4.splat(0);
    a0 = f32x4.pmax(a0, zero); a1 = f32x4.pmax(a1, zero); a2 = f32x4.pmax(a2, zero); a3 = f32x4.pmax(a3, zero);
    if (vectors > 1) { b0 = f32x4.pmax(b0, zero); b1 = f32x4.pmax(b1, zero); b2 = f32x4.pmax(b2, zero); b3 = f32x4.pmax(b3, zero); }
  }
  storeLanes(o, a0, cols);
  if (vectors > 1) storeLanes(o + 16, b0, cols - 4);
  if (mapsHere > 1) {
    o += plane;
    storeLanes(o, a1, cols);
    if (vectors > 1) storeLanes(o + 16, b1, cols - 4);
  }
  if (mapsHere > 2) {
    o += plane;
    storeLanes(o, a2, cols);
    if (vectors > 1) storeLanes(o + 16, b2, cols - 4);
  }
  if (mapsHere > 3) {
    o += plane;
    storeLanes(o, a3, cols);
    if (vectors > 1) storeLanes(o + 16, b3, cols - 4);
  }
}

/** Taps per row of packed weights: rows of up to 8 taps padded to 8 (the unrolled tile's constant offsets). */
// @ts-ignore: decorator
@inline function tapsPerRow(k: i32): i32 {
  return k <= 8 ? 8 : k;
}

/**
 * The last `cols` (1 or 2) pixels of 4 consecutive output rows for 4 maps: each vector holds
 * 2 pixels of 2 rows (two 64-bit loads), so a row end of 1-2 pixels fills its lanes instead of
 * leaving most of a 4-wide tile idle. `chan`, `o`: input and output at the first row's tail.
 */
// @ts-ignore: decorator
@inline function convLayerTail4(
  chan: usize, channels: i32, k: i32, rowBytes: usize, chanBytes: usize, wBase: usize,
  bias: usize, relu: bool, o: usize, outRowBytes: usize, plane: usize, mapsHere: i32, cols: i32,
): void {
  const bv0 = v128.load32_splat(bias);
  const bv1 = v128.load32_splat(bias, 4);
  const bv2 = v128.load32_splat(bias, 8);
  const bv3 = v128.load32_splat(bias, 12);
  let a0 = bv0, b0 = bv0;
  let a1 = bv1, b1 = bv1;
  let a2 = bv2, b2 = bv2;
  let a3 = bv3, b3 = bv3;
  let w = wBase;
  const tapRow = (<usize>k) << 2;
  const rowPad = (<usize>(tapsPerRow(k) - k)) << 6;
  const rb2 = rowBytes << 1;
  const rb3 = rb2 + rowBytes;
  for (let c = 0; c < channels; c++) {
    let row = chan;
    for (let p = 0; p < k; p++) {
      let q = row;
      const qEnd = row + tapRow;
      while (q < qEnd) {
        const i0 = v128.load64_lane(q + rowBytes, v128.load64_zero(q), 1);
        const i1 = v128.load64_lane(q + rb3, v128.load64_zero(q + rb2), 1);
        let wv = v128.load(w);
        a0 = madd(i0, wv, a0);
        b0 = madd(i1, wv, b0);
        wv = v128.load(w, 16);
        a1 = madd(i0, wv, a1);
        b1 = madd(i1, wv, b1);
        wv = v128.load(w, 32);
        a2 = madd(i0, wv, a2);
        b2 = madd(i1, wv, b2);
        wv = v128.load(w, 48);
        a3 = madd(i0, wv, a3);
        b3 = madd(i1, wv, b3);
        q += 4;
        w += 64;
      }
      w += rowPad;
      row += rowBytes;
    }
    chan += chanBytes;
  }
  if (relu) {
    const zero = f32x4.splat(0);
    a0 = f32x4.pmax(a0, zero); a1 = f32x4.pmax(a1, zero); a2 = f32x4.pmax(a2, zero); a3 = f32x4.pmax(a3, zero);
    b0 = f32x4.pmax(b0, zero); b1 = f32x4.pmax(b1, zero); b2 = f32x4.pmax(b2, zero); b3 = f32x4.pmax(b3, zero);
  }
  storeTail4(o, outRowBytes, a0, b0, cols);
  if (mapsHere > 1) storeTail4(o + plane, outRowBytes, a1, b1, cols);
  if (mapsHere > 2) storeTail4(o + plane * 2, outRowBytes, a2, b2, cols);
  if (mapsHere > 3) storeTail4(o + plane * 3, outRowBytes, a3, b3, cols);
}

/** Stores a tail tile's 4 rows of one map: rows 0-1 in the halves of `a`, rows 2-3 in those of `b`. */
// @ts-ignore: decorator
@inline function storeTail4(o: usize, outRowBytes: usize, a: v128, b: v128, cols: i32): void {
  if (cols == 2) {
    v128.store64_lane(o, a, 0);
    v128.store64_lane(o + outRowBytes, a, 1);
    v128.store64_lane(o + outRowBytes * 2, b, 0);
    v128.store64_lane(o + outRowBytes * 3, b, 1);
  } else {
    v128.store32_lane(o, a, 0);
    v128.store32_lane(o + outRowBytes, a, 2);
    v128.store32_lane(o + outRowBytes * 2, b, 0);
    v128.store32_lane(o + outRowBytes * 3, b, 2);
  }
}

/**
 * One image of the conv layer (stride 1, no padding). `inp`: [C][H][W] followed by at least
 * 8 + k floats of slack (the last tile of a row reads past the row; those lanes are dropped).
 * `weights`: [ceil(M/4)][C][k][tapsPerRow(k)][4][4]: per tap, the weights of 4 consecutive maps,
 * each repeated in all 4 lanes (zeros for maps past M and taps past k). Whole vectors rather than
 * broadcasts of single floats: V8 folds a v128.load's constant offset into the address but gives
 * each offset of a load32_splat its own register, which the unrolled taps run out of. `bias`: ceil(M/4)·4 floats. Writes [M][OH][OW] at `out`. Register tiles: 4 maps
 * × 8 pixels of one output row; a row's last 3-4 pixels in a tile of 4 (an 8-wide tile there
 * would waste up to 7 lanes), its last 1-2 in a tile of 2 pixels × 4 rows (a tile of 4 would
 * waste 2-3 of its 4 lanes), rows left over from groups of 4 in tiles of 4.
 */
export function convLayer(inp: usize, channels: i32, height: i32, width: i32, weights: usize, maps: i32, k: i32, bias: usize, relu: bool, out: usize): void {
  const outH = height - k + 1;
  const outW = width - k + 1;
  const plane = <usize>(outH * outW) << 2;
  const rowBytes = (<usize>width) << 2;
  const chanBytes = (<usize>(height * width)) << 2;
  const tapBytes = (<usize>(channels * k * tapsPerRow(k))) << 6;
  // Pixels in 8-wide tiles up to a rest of 0-4; a rest of 1-2 in tail tiles of 4 rows (and
  // 4-wide tiles for the last rows), a rest of 3-4 in 4-wide tiles.
  const rest = outW & 7;
  const wide = rest > 4 ? outW - rest + 8 : outW - rest;
  const outRowBytes = (<usize>outW) << 2;
  const tailRows = rest > 0 && rest <= 2 ? outH & ~3 : 0;
  for (let m = 0; m < maps; m += 4) {
    const mapsHere = min(4, maps - m);
    const wBase = weights + (<usize>(m >> 2)) * tapBytes;
    const b = bias + ((<usize>m) << 2);
    const o0 = out + (<usize>m) * plane;
    for (let h = 0; h < outH; h++) {
      const chan = inp + ((<usize>(h * width)) << 2);
      const o = o0 + ((<usize>(h * outW)) << 2);
      let x = 0;
      for (; x < wide; x += 8) {
        const xo = (<usize>x) << 2;
        convLayerTile(2, chan + xo, channels, k, rowBytes, chanBytes, wBase, b, relu, o + xo, plane, mapsHere, outW - x);
      }
      if (x < outW && h >= tailRows) {
        const xo = (<usize>x) << 2;
        convLayerTile(1, chan + xo, channels, k, rowBytes, chanBytes, wBase, b, relu, o + xo, plane, mapsHere, outW - x);
      }
    }
    const xo = (<usize>wide) << 2;
    for (let h = 0; h < tailRows; h += 4) {
      const chan = inp + ((<usize>(h * width)) << 2) + xo;
      const o = o0 + ((<usize>(h * outW)) << 2) + xo;
      convLayerTail4(chan, channels, k, rowBytes, chanBytes, wBase, b, relu, o, outRowBytes, plane, mapsHere, rest);
    }
  }
}

/** A boundary run of `bytes`: a copy of `src` with the 'copy' boundary, zeros with 'zero'. */
@inline
function copyOrZero(dst: usize, src: usize, bytes: usize, copy: bool): void {
  if (copy) memory.copy(dst, src, bytes);
  else memory.fill(dst, 0, bytes);
}

/**
 * One Jacobi step of the 7-point stencil, f32, over z-planes [zStart, zEnd) of an
 * [nz][ny][nx] grid: reads `src`, writes `dst` (both byte addresses of the grid's first cell).
 * Boundary cells get 0, or their `src` value when `copy`.
 */
export function stencilF32(src: usize, dst: usize, nx: i32, ny: i32, nz: i32, c0: f32, c1: f32, copy: bool, zStart: i32, zEnd: i32): void {
  const plane = <usize>(nx * ny);
  const pb = plane << 2;
  const xb = (<usize>nx) << 2;
  const vc0 = f32x4.splat(c0);
  const vc1 = f32x4.splat(c1);
  for (let z = zStart; z < zEnd; z++) {
    const zOff = (<usize>z) * pb;
    if (z == 0 || z == nz - 1 || ny < 3 || nx < 3) {
      copyOrZero(dst + zOff, src + zOff, pb, copy);
      continue;
    }
    const last = zOff + (<usize>(ny - 1)) * xb;
    copyOrZero(dst + zOff, src + zOff, xb, copy);
    copyOrZero(dst + last, src + last, xb, copy);
    for (let y = 1; y < ny - 1; y++) {
      const row = zOff + (<usize>y) * xb;
      const s = src + row;
      const d = dst + row;
      store<f32>(d, copy ? load<f32>(s) : 0);
      const end = (<usize>(nx - 1)) << 2;
      store<f32>(d + end, copy ? load<f32>(s + end) : 0);
      let i: usize = 4;
      // Vectors of 4 interior cells, then the remainder one cell at a time.
      for (; i + 16 <= end; i += 16) {
        const p = s + i;
        const n = f32x4.add(
          f32x4.add(f32x4.add(v128.load(p - 4), v128.load(p + 4)), f32x4.add(v128.load(p - xb), v128.load(p + xb))),
          f32x4.add(v128.load(p - pb), v128.load(p + pb)),
        );
        v128.store(d + i, madd(vc0, v128.load(p), f32x4.mul(vc1, n)));
      }
      for (; i < end; i += 4) {
        const p = s + i;
        const n = (load<f32>(p - 4) + load<f32>(p + 4)) + (load<f32>(p - xb) + load<f32>(p + xb)) + (load<f32>(p - pb) + load<f32>(p + pb));
        store<f32>(d + i, c0 * load<f32>(p) + c1 * n);
      }
    }
  }
}

/** `stencilF32` for f64 grids (f64x2 vectors). */
export function stencilF64(src: usize, dst: usize, nx: i32, ny: i32, nz: i32, c0: f64, c1: f64, copy: bool, zStart: i32, zEnd: i32): void {
  const plane = <usize>(nx * ny);
  const pb = plane << 3;
  const xb = (<usize>nx) << 3;
  const vc0 = f64x2.splat(c0);
  const vc1 = f64x2.splat(c1);
  for (let z = zStart; z < zEnd; z++) {
    const zOff = (<usize>z) * pb;
    if (z == 0 || z == nz - 1 || ny < 3 || nx < 3) {
      copyOrZero(dst + zOff, src + zOff, pb, copy);
      continue;
    }
    const last = zOff + (<usize>(ny - 1)) * xb;
    copyOrZero(dst + zOff, src + zOff, xb, copy);
    copyOrZero(dst + last, src + last, xb, copy);
    for (let y = 1; y < ny - 1; y++) {
      const row = zOff + (<usize>y) * xb;
      const s = src + row;
      const d = dst + row;
      store<f64>(d, copy ? load<f64>(s) : 0);
      const end = (<usize>(nx - 1)) << 3;
      store<f64>(d + end, copy ? load<f64>(s + end) : 0);
      let i: usize = 8;
      for (; i + 16 <= end; i += 16) {
        const p = s + i;
        const n = f64x2.add(
          f64x2.add(f64x2.add(v128.load(p - 8), v128.load(p + 8)), f64x2.add(v128.load(p - xb), v128.load(p + xb))),
          f64x2.add(v128.load(p - pb), v128.load(p + pb)),
        );
        v128.store(d + i, maddF64(vc0, v128.load(p), f64x2.mul(vc1, n)));
      }
      for (; i < end; i += 8) {
        const p = s + i;
        const n = (load<f64>(p - 8) + load<f64>(p + 8)) + (load<f64>(p - xb) + load<f64>(p + xb)) + (load<f64>(p - pb) + load<f64>(p + pb));
        store<f64>(d + i, c0 * load<f64>(p) + c1 * n);
      }
    }
  }
}

// Prefix scans, in place. Each vector of elements is scanned with lane shifts (a tree of
// log2(lanes) adds) and then offset by the running carry, so the only serial dependency is one
// add and one broadcast per vector. Integers wrap mod 2^32 (i32 and u32 are the same bits);
// f32 sums in f64 and rounds once per element, as the JavaScript kernel does.

/** [0, v0, v1, v2]: the 32-bit lanes of `v` one lane up, zero shifted in. */
// @ts-ignore: decorator
@inline function up1x32(v: v128): v128 {
  return i8x16.shuffle(i32x4.splat(0), v, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27);
}

/** [0, 0, v0, v1]. */
// @ts-ignore: decorator
@inline function up2x32(v: v128): v128 {
  return i8x16.shuffle(i32x4.splat(0), v, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23);
}

/** v3 in every 32-bit lane. */
// @ts-ignore: decorator
@inline function last32(v: v128): v128 {
  return i8x16.shuffle(v, v, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15);
}

/** [0, v0]: the 64-bit lanes of `v` one lane up. */
// @ts-ignore: decorator
@inline function up1x64(v: v128): v128 {
  return i8x16.shuffle(i32x4.splat(0), v, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23);
}

/** v1 in both 64-bit lanes. */
// @ts-ignore: decorator
@inline function last64(v: v128): v128 {
  return i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15);
}

/** [a1, b0]: the upper lane of `a`, then the lower of `b`. */
// @ts-ignore: decorator
@inline function straddle64(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23);
}

/** The last `count` elements of type `E` at `p`, one at a time, summed in `A`; returns the carry. */
// @ts-ignore: decorator
@inline function scanTail<E, A>(p: usize, count: i32, acc: A, exclusive: bool): A {
  for (let i = 0; i < count; i++) {
    const v = <A>load<E>(p);
    if (exclusive) store<E>(p, <E>acc);
    acc += v;
    if (!exclusive) store<E>(p, <E>acc);
    p += sizeof<E>();
  }
  return acc;
}

/**
 * Scans `n` 32-bit integers at `p` in place, starting from `carry`; returns the carry after them.
 * Inclusive: p[i] = carry + x0 + … + xi; exclusive: carry + x0 + … + x(i−1).
 */
export function scanI32(p: usize, n: i32, carry: i32, exclusive: bool): i32 {
  let c = i32x4.splat(carry);
  const end = p + ((<usize>(n & ~3)) << 2);
  for (; p < end; p += 16) {
    const v = v128.load(p);
    let s = i32x4.add(v, up1x32(v));
    s = i32x4.add(s, up2x32(s));
    const total = i32x4.add(s, c);
    v128.store(p, exclusive ? i32x4.add(up1x32(s), c) : total);
    c = last32(total);
  }
  return scanTail<i32, i32>(p, n & 3, i32x4.extract_lane(c, 0), exclusive);
}

/** `scanI32` for f32 elements with an f64 carry: sums in f64, each output rounded once to f32. */
export function scanF32(p: usize, n: i32, carry: f64, exclusive: bool): f64 {
  let c = f64x2.splat(carry);
  const end = p + ((<usize>(n & ~3)) << 2);
  for (; p < end; p += 16) {
    const v = v128.load(p);
    const lo = f64x2.promote_low_f32x4(v);
    const hi = f64x2.promote_low_f32x4(i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15));
    const lo2 = f64x2.add(lo, up1x64(lo));
    const hi2 = f64x2.add(f64x2.add(hi, up1x64(hi)), last64(lo2));
    const hiTotal = f64x2.add(hi2, c);
    let a: v128, b: v128;
    if (exclusive) {
      a = f64x2.add(up1x64(lo), c);
      b = f64x2.add(straddle64(lo2, hi2), c);
    } else {
      a = f64x2.add(lo2, c);
      b = hiTotal;
    }
    // Both halves rounded to f32, in the lower 64 bits of each, then joined.
    v128.store(p, i8x16.shuffle(f32x4.demote_f64x2_zero(a), f32x4.demote_f64x2_zero(b), 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23));
    c = last64(hiTotal);
  }
  return scanTail<f32, f64>(p, n & 3, f64x2.extract_lane(c, 0), exclusive);
}

/** `scanI32` for f64 elements, four per step (two vectors). */
export function scanF64(p: usize, n: i32, carry: f64, exclusive: bool): f64 {
  let c = f64x2.splat(carry);
  const end = p + ((<usize>(n & ~3)) << 3);
  for (; p < end; p += 32) {
    const a = v128.load(p);
    const b = v128.load(p, 16);
    const a2 = f64x2.add(a, up1x64(a));
    const b2 = f64x2.add(f64x2.add(b, up1x64(b)), last64(a2));
    const bTotal = f64x2.add(b2, c);
    if (exclusive) {
      v128.store(p, f64x2.add(up1x64(a), c));
      v128.store(p, f64x2.add(straddle64(a2, b2), c), 16);
    } else {
      v128.store(p, f64x2.add(a2, c));
      v128.store(p, bTotal, 16);
    }
    c = last64(bTotal);
  }
  return scanTail<f64, f64>(p, n & 3, f64x2.extract_lane(c, 0), exclusive);
}

// Sums, the first pass of a two-pass parallel scan: independent accumulators (no serial chain
// but one add per vector), integers wrapping mod 2^32, floats summed in f64.

/** Sum of `n` 32-bit integers at `p`, wrapping (i32 and u32 are the same bits). */
export function sumI32(p: usize, n: i32): i32 {
  let a = i32x4.splat(0);
  let b = a;
  const end = p + ((<usize>(n & ~7)) << 2);
  for (; p < end; p += 32) {
    a = i32x4.add(a, v128.load(p));
    b = i32x4.add(b, v128.load(p, 16));
  }
  a = i32x4.add(a, b);
  let s = i32x4.extract_lane(a, 0) + i32x4.extract_lane(a, 1) + i32x4.extract_lane(a, 2) + i32x4.extract_lane(a, 3);
  for (let i = 0; i < (n & 7); i++) {
    s += load<i32>(p);
    p += 4;
  }
  return s;
}

/** Sum of `n` f32 at `p`, in f64. */
export function sumF32(p: usize, n: i32): f64 {
  let a = f64x2.splat(0);
  let b = a;
  const end = p + ((<usize>(n & ~3)) << 2);
  for (; p < end; p += 16) {
    const v = v128.load(p);
    a = f64x2.add(a, f64x2.promote_low_f32x4(v));
    b = f64x2.add(b, f64x2.promote_low_f32x4(i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15)));
  }
  a = f64x2.add(a, b);
  let s = f64x2.extract_lane(a, 0) + f64x2.extract_lane(a, 1);
  for (let i = 0; i < (n & 3); i++) {
    s += <f64>load<f32>(p);
    p += 4;
  }
  return s;
}

/** Sum of `n` f64 at `p` (four accumulators: the adds' latency bounds a loop with fewer). */
export function sumF64(p: usize, n: i32): f64 {
  let a = f64x2.splat(0);
  let b = a, c = a, d = a;
  const end = p + ((<usize>(n & ~7)) << 3);
  for (; p < end; p += 64) {
    a = f64x2.add(a, v128.load(p));
    b = f64x2.add(b, v128.load(p, 16));
    c = f64x2.add(c, v128.load(p, 32));
    d = f64x2.add(d, v128.load(p, 48));
  }
  a = f64x2.add(f64x2.add(a, b), f64x2.add(c, d));
  let s = f64x2.extract_lane(a, 0) + f64x2.extract_lane(a, 1);
  for (let i = 0; i < (n & 7); i++) {
    s += load<f64>(p);
    p += 8;
  }
  return s;
}

// ---------------------------------------------------------------- grid search (pruned)
// The pruned depth-first search of src/kernels/grid-search.ts over a run of prefixes, with the
// constraints two at a time in f64x2 lanes. Every lane computes what the JavaScript computes for
// its constraint (separate multiply and add, never fused: the final test must match the f64
// reference bit for bit), so the same sub-grids are pruned and the same points pass. The header
// at `g` (`GRID` in src/kernels/grid-search.ts) holds the layout and the search's position, so
// a search that fills `out` or spends its budget returns and resumes on the next call.

/** The constraints of P's row `j` that no completion of the prefix can satisfy: any lane set. */
// @ts-ignore: decorator
@inline function gridInfeasible(P: usize, T: usize, eS: usize, lo: usize, hi: usize, rowBytes: usize, j: i32): bool {
  const at = <usize>j * rowBytes;
  let bad = i64x2.splat(0);
  for (let i: usize = 0; i < rowBytes; i += 16) {
    const s = f64x2.sub(v128.load(P + at + i), v128.load(T + i));
    const e = v128.load(eS + i);
    const above = f64x2.gt(f64x2.add(s, v128.load(lo + at + i)), e);
    const below = f64x2.lt(f64x2.add(s, v128.load(hi + at + i)), f64x2.neg(e));
    bad = v128.or(bad, v128.or(above, below));
  }
  return v128.any_true(bad);
}

/** Value r of axis j, as gridAxisValues computes it (lower + r · step, f64). */
// @ts-ignore: decorator
@inline function gridAxis(lowers: usize, steps: usize, j: i32, r: i32): f64 {
  const at = <usize>j << 3;
  return load<f64>(lowers + at) + <f64>r * load<f64>(steps + at);
}

/** x_j = value r of axis j and P's row j + 1 = row j + c_j · x_j. */
// @ts-ignore: decorator
@inline function gridFix(P: usize, cT: usize, X: usize, lowers: usize, steps: usize, rowBytes: usize, j: i32, r: i32): void {
  const xv = gridAxis(lowers, steps, j, r);
  store<f64>(X + (<usize>j << 3), xv);
  const src = P + <usize>j * rowBytes;
  const c = cT + <usize>j * rowBytes;
  const xs = f64x2.splat(xv);
  for (let i: usize = 0; i < rowBytes; i += 16) v128.store(src + rowBytes + i, f64x2.add(v128.load(src + i), f64x2.mul(v128.load(c + i), xs)));
}

// Header fields (byte offsets; i32 unless f64), mirrored by `GRID` in src/kernels/grid-search.ts.
const G_D = 0, G_M = 4, G_MP = 8, G_OUTER = 12, G_LAST_LO = 16, G_LAST_HI = 20;
const G_CT = 24, G_T = 28, G_ES = 32, G_E = 36, G_LO = 40, G_HI = 44, G_P = 48, G_X = 52, G_LOWERS = 56, G_STEPS = 60, G_COUNTS = 64, G_POS = 68;
const G_LEVEL = 72, G_LAST_END = 76, G_PREFIX = 80, G_PREFIX_END = 88, G_BUDGET = 96, G_DONE = 100;

/**
 * Continues the search the header at `g` describes, writing passing points (d f64 each, in
 * lexicographic order) at `out`; returns how many, at most `cap`. It stops when the run of
 * prefixes is done (and sets the header's done word), when `out` is full, or when it has spent
 * the header's budget (one unit per node of the search tree and per last-axis candidate; what is
 * left is stored back), so that a caller can check for an abort between calls. Constraint rows are
 * `mP` (m rounded up to even) f64 long, the padding lanes set so that they never prune.
 */
export function gridPruned(g: usize, out: usize, cap: i32): i32 {
  const d = load<i32>(g, G_D), m = load<i32>(g, G_M), outer = load<i32>(g, G_OUTER);
  const lastLo = load<i32>(g, G_LAST_LO), lastHi = load<i32>(g, G_LAST_HI);
  const rowBytes = <usize>load<i32>(g, G_MP) << 3;
  const cT = <usize>load<i32>(g, G_CT), T = <usize>load<i32>(g, G_T), eS = <usize>load<i32>(g, G_ES), E = <usize>load<i32>(g, G_E);
  const lo = <usize>load<i32>(g, G_LO), hi = <usize>load<i32>(g, G_HI), P = <usize>load<i32>(g, G_P), X = <usize>load<i32>(g, G_X);
  const lowers = <usize>load<i32>(g, G_LOWERS), steps = <usize>load<i32>(g, G_STEPS), counts = <usize>load<i32>(g, G_COUNTS), pos = <usize>load<i32>(g, G_POS);
  const last = d - 1;
  const lower = load<f64>(lowers + (<usize>last << 3)), step = load<f64>(steps + (<usize>last << 3));
  const lastRow = <usize>last * rowBytes;
  const pointBytes = <usize>d << 3;
  let level = load<i32>(g, G_LEVEL);
  let lastEnd = load<i32>(g, G_LAST_END);
  let budget = load<i32>(g, G_BUDGET);
  let written = 0;
  for (;;) {
    if (budget <= 0) {
      store<i32>(g, level, G_LEVEL);
      store<i32>(g, lastEnd, G_LAST_END);
      store<i32>(g, 0, G_BUDGET);
      return written;
    }
    if (level < outer) {
      // The next prefix: decode its digits (x1 slowest) and fix its rows.
      const prefix = load<f64>(g, G_PREFIX);
      if (prefix >= load<f64>(g, G_PREFIX_END)) {
        store<i32>(g, -1, G_LEVEL);
        store<i32>(g, budget, G_BUDGET);
        store<i32>(g, 1, G_DONE);
        return written;
      }
      store<f64>(g, prefix + 1, G_PREFIX);
      budget--;
      let idx = <i64>prefix;
      for (let j = outer - 1; j >= 0; j--) {
        const n = <i64>load<i32>(counts + (<usize>j << 2));
        store<i32>(pos + (<usize>j << 2), <i32>(idx % n));
        idx /= n;
      }
      for (let j = 0; j < outer; j++) gridFix(P, cT, X, lowers, steps, rowBytes, j, load<i32>(pos + (<usize>j << 2)));
      if (gridInfeasible(P, T, eS, lo, hi, rowBytes, outer)) {
        level = -1;
        continue;
      }
      level = outer;
    } else if (level == last) {
      let r = load<i32>(pos + (<usize>last << 2));
      for (; r <= lastEnd; r++) {
        const xv = lower + <f64>r * step;
        let i = 0;
        if (budget > 0) {
          for (; i < m; i++) {
            const at = <usize>i << 3;
            const s = load<f64>(P + lastRow + at) + load<f64>(cT + lastRow + at) * xv;
            if (!(Math.abs(s - load<f64>(T + at)) <= load<f64>(E + at))) break;
          }
          if (i < m) {
            budget--;
            continue;
          }
        }
        if (written == cap || budget <= 0) {
          // Resume at r: its test runs again (it passed, or was not run for want of budget).
          store<i32>(pos + (<usize>last << 2), r);
          store<i32>(g, level, G_LEVEL);
          store<i32>(g, lastEnd, G_LAST_END);
          store<i32>(g, budget, G_BUDGET);
          return written;
        }
        const o = out + <usize>written * pointBytes;
        memory.copy(o, X, pointBytes - 8);
        store<f64>(o + pointBytes - 8, xv);
        written++;
        budget--;
      }
      level--;
      continue;
    } else {
      const at = pos + (<usize>level << 2);
      const r = load<i32>(at);
      if (r >= load<i32>(counts + (<usize>level << 2))) {
        level--;
        continue;
      }
      store<i32>(at, r + 1);
      budget--;
      gridFix(P, cT, X, lowers, steps, rowBytes, level, r);
      if (gridInfeasible(P, T, eS, lo, hi, rowBytes, level + 1)) continue;
      level++;
    }
    // Entering `level`, feasible so far: start its axis, or on the last one the range of
    // indices each constraint's linear bound allows (widened by one index and the slack).
    if (level < last) {
      store<i32>(pos + (<usize>level << 2), 0);
      continue;
    }
    let rLo: f64 = 0;
    let rHi: f64 = <f64>(load<i32>(counts + (<usize>last << 2)) - 1);
    for (let i = 0; i < m && rLo <= rHi; i++) {
      const at = <usize>i << 3;
      const ci = load<f64>(cT + lastRow + at);
      const s = load<f64>(P + lastRow + at) - load<f64>(T + at);
      const e = load<f64>(eS + at);
      if (ci == 0) {
        if (Math.abs(s) > e) rHi = -1;
        continue;
      }
      let t0 = (-e - s) / ci;
      let t1 = (e - s) / ci;
      if (ci < 0) {
        const t = t0;
        t0 = t1;
        t1 = t;
      }
      const a = Math.ceil((t0 - lower) / step) - 1;
      const z = Math.floor((t1 - lower) / step) + 1;
      if (a > rLo) rLo = a;
      if (z < rHi) rHi = z;
    }
    const from = rLo > <f64>lastLo ? rLo : <f64>lastLo;
    const to = rHi < <f64>(lastHi - 1) ? rHi : <f64>(lastHi - 1);
    if (from > to) {
      // Nothing to test: the row's end (so the position reads as past it).
      const n = load<i32>(counts + (<usize>last << 2));
      store<i32>(pos + (<usize>last << 2), n);
      lastEnd = n - 1;
    } else {
      store<i32>(pos + (<usize>last << 2), <i32>from);
      lastEnd = <i32>to;
    }
  }
  return written; // not reached: the loop returns
}
