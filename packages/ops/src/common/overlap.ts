/** True when two views share bytes of the same buffer (writing one would corrupt the other). */
export function overlaps(a: ArrayBufferView, b: ArrayBufferView): boolean {
  if (a.buffer !== b.buffer) return false;
  const a0 = a.byteOffset;
  const b0 = b.byteOffset;
  return a0 < b0 + b.byteLength && b0 < a0 + a.byteLength;
}
