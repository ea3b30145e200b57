import { isDetachedBuffer, type TypedArray } from '@kernelkit/core';

type Ctor<T extends TypedArray> = { new (n: number): T; new (b: ArrayBufferLike, off?: number, len?: number): T; readonly BYTES_PER_ELEMENT: number };

/** True when the view's buffer was transferred away (the guards' own test, for Node 20 too). */
export function isDetachedView(view: ArrayBufferView): boolean {
  return isDetachedBuffer(view.buffer);
}

/** A view of `ctor` whose buffer has been transferred (detached) after `n` elements were allocated. */
export function detachedArray<T extends TypedArray>(ctor: Ctor<T>, n = 16): T {
  const a = new ctor(n);
  structuredClone(a.buffer, { transfer: [a.buffer as ArrayBuffer] });
  return a;
}

/** A copy of `a` in a SharedArrayBuffer, at element offset `offset` of a larger buffer (so byteOffset ≠ 0 when offset > 0). */
export function sharedCopy<T extends TypedArray>(a: T, offset = 0): T {
  const ctor = a.constructor as Ctor<T>;
  const sab = new SharedArrayBuffer((a.length + offset + 1) * ctor.BYTES_PER_ELEMENT);
  const s = new ctor(sab, offset * ctor.BYTES_PER_ELEMENT, a.length);
  s.set(a as never);
  return s;
}

/** A byte copy of a view (or the fact that it was detached), for the untouched checks. */
class ViewSnapshot {
  readonly type: string;
  readonly bytes: Buffer | undefined;
  constructor(view: ArrayBufferView) {
    this.type = view.constructor.name;
    this.bytes = isDetachedView(view) ? undefined : Buffer.from(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
  }
  describe(): string {
    return this.bytes === undefined ? `${this.type} (detached)` : `${this.type} of ${this.bytes.length} bytes`;
  }
}

/** A deep copy of `v` in which every typed array is a byte copy: NaN payloads and -0 compare exactly. */
export function snapshot(v: unknown): unknown {
  if (ArrayBuffer.isView(v)) return new ViewSnapshot(v);
  if (Array.isArray(v)) return v.map(snapshot);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, snapshot(x)]));
  return v;
}

/** Where `now` differs from the snapshot `before` (a path and what changed), or undefined. Cheap on big arrays. */
export function changedSince(before: unknown, now: unknown, path = 'args'): string | undefined {
  if (before instanceof ViewSnapshot) {
    if (!ArrayBuffer.isView(now)) return `${path} is no longer a typed array`;
    const after = new ViewSnapshot(now);
    if (after.type !== before.type) return `${path} changed type from ${before.type} to ${after.type}`;
    if (before.bytes === undefined || after.bytes === undefined) {
      return before.bytes === after.bytes ? undefined : `${path} changed from ${before.describe()} to ${after.describe()}`;
    }
    if (!before.bytes.equals(after.bytes)) {
      const i = before.bytes.findIndex((b, j) => b !== after.bytes![j]);
      return `${path} was written (first changed byte ${i} of ${before.bytes.length})`;
    }
    return undefined;
  }
  if (Array.isArray(before)) {
    if (!Array.isArray(now) || now.length !== before.length) return `${path} changed shape`;
    for (let i = 0; i < before.length; i++) {
      const d = changedSince(before[i], now[i], `${path}[${i}]`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  if (before !== null && typeof before === 'object') {
    if (now === null || typeof now !== 'object') return `${path} changed shape`;
    const keys = new Set([...Object.keys(before), ...Object.keys(now)]);
    for (const k of keys) {
      const d = changedSince((before as Record<string, unknown>)[k], (now as Record<string, unknown>)[k], `${path}.${k}`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  return Object.is(before, now) ? undefined : `${path} changed from ${String(before)} to ${String(now)}`;
}
