import { describe, expect, it } from 'vitest';
import { DisposedError } from '@kernelkit/core';
import { createBackend, type OpTable } from '../src/index.js';

const never = () => {
  throw new Error('no op runs in these tests');
};
const ops = Object.fromEntries(['conv2d', 'stencil3d', 'scan', 'gridSearch', 'convLayer'].map((op) => [op, { defaultVariant: 'only', variants: { only: never } }])) as unknown as OpTable;
const info = { name: 'webgpu', description: 'test', software: false, capabilities: { f64: false } } as const;

describe('Backend.warmUp', () => {
  it("is the spec's warm-up, and rejects with DisposedError once the backend is disposed", async () => {
    let warmed = 0;
    const backend = createBackend({ name: 'webgpu', info, ops, release: () => {}, warmUp: async () => void warmed++ });
    await backend.warmUp!();
    expect(warmed).toBe(1);
    await backend.dispose();
    await expect(backend.warmUp!()).rejects.toBeInstanceOf(DisposedError);
    expect(warmed).toBe(1);
  });

  it('dispose waits for a warm-up in flight', async () => {
    let done = false;
    let release = (): void => {};
    const backend = createBackend({ name: 'webgpu', info, ops, release: () => void expect(done).toBe(true), warmUp: () => new Promise<void>((r) => (release = () => ((done = true), r()))) });
    const warming = backend.warmUp!();
    const disposing = backend.dispose();
    release();
    await Promise.all([warming, disposing]);
  });

  it('is absent where the spec has none', () => {
    expect(createBackend({ name: 'cpu', info: { ...info, name: 'cpu' }, ops, release: () => {} }).warmUp).toBeUndefined();
  });
});
