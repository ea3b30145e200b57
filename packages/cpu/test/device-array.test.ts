/**
 * DeviceArray semantics through the kit, on the cpu backend (host-held handles): output
 * 'device', read, dispose, disposed-handle errors naming the parameter, cross-backend read-back
 * with a note, and the backend's dispose invalidating its handles.
 */
import { describe, expect, it } from 'vitest';
import { DisposedError, InvalidArgumentError } from '@kernelkit/core';
import { createCpuBackend } from '../src/index.js';
import { isDeviceArray, makeConvLayerArgs, type DeviceArray } from '@kernelkit/ops';

const grid = (n: number): Float32Array => Float32Array.from({ length: n * n * n }, (_, i) => Math.sin(i * 0.37));
const layer = () => makeConvLayerArgs({ batch: 2, channels: 2, height: 9, width: 9, maps: 3, k: 3 });

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

describe('DeviceArray on a backend without device memory (cpu)', () => {
  it("output: 'device' returns a host-held handle whose read() equals the array result, a fresh copy each time", async () => {
    await using b = createCpuBackend();
    const args = layer();
    const plain = await b.convLayer(args);
    const res = await b.convLayer(args, { output: 'device' });
    const h = res.data;
    expect(isDeviceArray(h)).toBe(true);
    expect(h).toMatchObject({ kind: 'device-array', backend: 'cpu', dtype: 'f32', length: plain.data.length, location: 'host', disposed: false });
    const a = await h.read();
    const c = await h.read();
    expect(a).toEqual(plain.data);
    a.fill(7);
    expect(c).toEqual(plain.data);
    expect(await h.read()).toEqual(plain.data);
    h.dispose();
  });

  it('a handle chains into the next call with no note, equal to the unchained result', async () => {
    await using b = createCpuBackend();
    const input = grid(6);
    const twice = await b.stencil3d({ input, nx: 6, steps: 2 });
    const first = await b.stencil3d({ input, nx: 6 }, { output: 'device' });
    const second = await b.stencil3d({ input: first.data, nx: 6 });
    expect(second.data).toEqual(twice.data);
    expect(second.notes).toBeUndefined();
    first.data.dispose();
    // A handle input with a host `out`.
    const h = (await b.conv2d({ input: new Float32Array(16).fill(1), height: 4, width: 4, filter: new Float32Array([1]), k: 1 }, { output: 'device' })).data;
    const out = new Float32Array(16);
    const r = await b.conv2d({ input: h, height: 4, width: 4, filter: new Float32Array([2]), k: 1 }, { out });
    expect(r.data).toBe(out);
    expect(Array.from(out)).toEqual(Array(16).fill(2));
  });

  it('dispose is idempotent, `using` disposes, and a disposed handle reads as DisposedError', async () => {
    const b = createCpuBackend();
    const h = (await b.scan({ input: new Uint32Array([1, 2, 3]) }, { output: 'device' })).data;
    expect(Array.from(await h.read())).toEqual([1, 3, 6]);
    h.dispose();
    h.dispose();
    expect(h.disposed).toBe(true);
    const e = await rejection(h.read());
    expect(e).toBeInstanceOf(DisposedError);
    expect((e as Error).message).toMatch(/DeviceArray has been disposed/);
    let kept: DeviceArray<Uint32Array> | undefined;
    {
      using g = (await b.scan({ input: new Uint32Array([4]) }, { output: 'device' })).data;
      kept = g;
      expect(g.disposed).toBe(false);
    }
    expect(kept.disposed).toBe(true);
    await b.dispose();
  });

  it('a disposed handle as an input is InvalidArgumentError naming the parameter, before any work', async () => {
    await using b = createCpuBackend();
    const args = layer();
    const h = (await b.convLayer(args, { output: 'device' })).data;
    h.dispose();
    const e = await rejection(b.convLayer({ ...args, input: h, batch: 2, channels: 3, height: 7, width: 7 }));
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as InvalidArgumentError).parameter).toBe('input');
    expect((e as Error).message).toMatch(/disposed/);
  });

  it('a handle of the wrong length or dtype gets the same errors as an array', async () => {
    await using b = createCpuBackend();
    const h = (await b.stencil3d({ input: grid(4), nx: 4 }, { output: 'device' })).data;
    const asHandle = await rejection(b.stencil3d({ input: h, nx: 5 }));
    const asArray = await rejection(b.stencil3d({ input: await h.read(), nx: 5 }));
    expect(asHandle).toBeInstanceOf(InvalidArgumentError);
    expect((asHandle as InvalidArgumentError).parameter).toBe('input');
    expect((asHandle as Error).message).toBe((asArray as Error).message);
    const f64 = (await b.stencil3d({ input: new Float64Array(64), nx: 4 }, { output: 'device' })).data;
    expect(f64.dtype).toBe('f64');
    const wrongType = await rejection(b.conv2d({ input: f64 as never, height: 8, width: 8, filter: new Float32Array(1), k: 1 }));
    expect(wrongType).toBeInstanceOf(InvalidArgumentError);
    expect((wrongType as InvalidArgumentError).parameter).toBe('input');
    expect((wrongType as Error).message).toMatch(/expected Float32Array, got a DeviceArray of f64/);
  });

  it("another instance's handle and another backend kind's handle are read back, and the notes say so", async () => {
    await using a = createCpuBackend();
    await using b = createCpuBackend();
    const input = grid(5);
    const ref = await b.stencil3d({ input, nx: 5, steps: 2 });
    const h = (await a.stencil3d({ input, nx: 5 }, { output: 'device' })).data;
    const r = await b.stencil3d({ input: h, nx: 5 });
    expect(r.data).toEqual(ref.data);
    expect(r.notes?.some((n) => /^input copied from a host-held DeviceArray of another cpu backend/.test(n))).toBe(true);
    // A device-resident handle of another kind (stands in for a WebGPU buffer): read back, said so.
    const once = await a.stencil3d({ input, nx: 5 });
    let reads = 0;
    const foreign: DeviceArray<Float32Array> = {
      kind: 'device-array',
      backend: 'webgpu',
      dtype: 'f32',
      length: once.data.length,
      location: 'device',
      disposed: false,
      read: async () => {
        reads++;
        return once.data.slice();
      },
      dispose: () => {},
      [Symbol.dispose]: () => {},
    };
    const viaForeign = await b.stencil3d({ input: foreign, nx: 5 });
    expect(reads).toBe(1);
    expect(viaForeign.data).toEqual(ref.data);
    expect(viaForeign.notes).toContain('input read back from webgpu device memory (a DeviceArray of the webgpu backend)');
  });

  it("the backend's dispose disposes its live handles", async () => {
    const b = createCpuBackend();
    const h = (await b.convLayer(layer(), { output: 'device' })).data;
    const kept = (await b.convLayer(layer(), { output: 'device' })).data;
    kept.dispose();
    await b.dispose();
    expect(h.disposed).toBe(true);
    const e = await rejection(h.read());
    expect(e).toBeInstanceOf(DisposedError);
    expect((e as Error).message).toMatch(/cpu backend has been disposed/);
  });

  it('option guards: output value, out with device output, gridSearch', async () => {
    await using b = createCpuBackend();
    const args = layer();
    const bad = await rejection(b.convLayer(args, { output: 'gpu' as never }));
    expect((bad as InvalidArgumentError).parameter).toBe('options.output');
    const both = await rejection(b.convLayer(args, { output: 'device', out: new Float32Array(2 * 3 * 7 * 7) } as never));
    expect((both as InvalidArgumentError).parameter).toBe('options.out');
    const grid1 = { dims: [{ lower: 0, upper: 1, step: 1 }], coefficients: [1], targets: [0], tolerances: [1] };
    const gs = await rejection(b.gridSearch(grid1, { output: 'device' } as never));
    expect((gs as InvalidArgumentError).parameter).toBe('options.output');
    expect((await b.convLayer(args, { output: 'array' })).data).toBeInstanceOf(Float32Array);
  });
});
