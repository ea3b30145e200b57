/** Packs a uniform block of 32-bit scalars (u32/i32/f32) in declaration order, padded to 16 bytes. */
export type Scalar = readonly ['u32' | 'i32' | 'f32', number];

export function packParams(fields: readonly Scalar[]): ArrayBuffer {
  const buf = new ArrayBuffer(Math.max(16, Math.ceil((fields.length * 4) / 16) * 16));
  const dv = new DataView(buf);
  fields.forEach(([t, v], i) => {
    if (t === 'f32') dv.setFloat32(i * 4, v, true);
    else if (t === 'i32') dv.setInt32(i * 4, v, true);
    else dv.setUint32(i * 4, v >>> 0, true);
  });
  return buf;
}

/** A float array laid out as `array<vec4<f32>, N>` (uniform arrays need a 16-byte stride). */
export function vec4Array(data: ArrayLike<number>, minVec4s = 1): Float32Array {
  const out = new Float32Array(Math.max(4 * minVec4s, Math.ceil(data.length / 4) * 4));
  for (let i = 0; i < data.length; i++) out[i] = data[i]!;
  return out;
}
