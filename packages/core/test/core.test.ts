import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  AbortError,
  assertInteger,
  assertOneOf,
  assertTypedArray,
  BackendUnavailableError,
  checkedProduct,
  checkTypedArray,
  describeValue,
  InvalidArgumentError,
  KernelkitError,
  makeTiming,
  median,
  readEnumEnv,
  throwIfAborted,
} from '../src/index.js';

describe('named errors', () => {
  it('InvalidArgumentError names the parameter in .parameter and the message', () => {
    const e = new InvalidArgumentError('k', 'must be odd');
    expect(e).toBeInstanceOf(KernelkitError);
    expect(e.name).toBe('InvalidArgumentError');
    expect(e.code).toBe('ERR_KERNELKIT_INVALID_ARGUMENT');
    expect(e.parameter).toBe('k');
    expect(e.message).toBe('k: must be odd');
  });
  it('BackendUnavailableError lists every failure', () => {
    const e = new BackendUnavailableError('no backend could start', [
      { backend: 'webgpu', reason: 'no adapter' },
      { backend: 'piscina', reason: 'worker missing' },
    ]);
    expect(e.message).toContain('webgpu: no adapter');
    expect(e.message).toContain('piscina: worker missing');
    expect(e.failures).toHaveLength(2);
  });
  it('throwIfAborted carries the signal reason as cause', () => {
    const ac = new AbortController();
    throwIfAborted(ac.signal);
    const reason = new Error('stop');
    ac.abort(reason);
    try {
      throwIfAborted(ac.signal);
      expect.fail('should throw');
    } catch (e) {
      expect(e).toBeInstanceOf(AbortError);
      expect((e as Error).cause).toBe(reason);
    }
  });
});

describe('guards', () => {
  it.each([
    [2.5, /expected an integer, got 2.5/],
    [Number.NaN, /expected an integer, got NaN/],
    [Number.POSITIVE_INFINITY, /expected an integer, got Infinity/],
    ['3', /expected an integer, got "3"/],
    [0, /must be >= 1, got 0/],
    [11, /must be <= 10, got 11/],
  ])('assertInteger rejects %s', (v, msg) => {
    expect(() => assertInteger(v, 'width', 1, 10)).toThrow(msg);
    expect(() => assertInteger(v, 'width', 1, 10)).toThrow(/^width: /);
  });
  it('assertTypedArray checks the type and the length, and spots detached buffers', () => {
    expect(() => assertTypedArray(new Float64Array(4), 'input', [Float32Array])).toThrow(/input: expected Float32Array, got Float64Array\(4\)/);
    expect(() => assertTypedArray(new Float32Array(3), 'input', [Float32Array], 4, 'h*w')).toThrow(/expected length 4 \(h\*w\), got 3/);
    const a = new Float32Array(4);
    structuredClone(a.buffer, { transfer: [a.buffer] });
    expect(() => assertTypedArray(a, 'input', [Float32Array], 4)).toThrow(InvalidArgumentError);
    expect(() => assertTypedArray(new Float32Array(4), 'input', [Float32Array], 4)).not.toThrow();
  });
  it('checkTypedArray takes arrays of another realm and subclasses as their base type, and returns a plain view of the same memory', () => {
    const foreign = runInNewContext('new Float32Array([1, 2, 3])') as Float32Array;
    expect(foreign instanceof Float32Array).toBe(false);
    const v = checkTypedArray(foreign, 'input', [Float32Array], 3);
    expect(v).toBeInstanceOf(Float32Array);
    expect(Array.from(v)).toEqual([1, 2, 3]);
    class Tagged extends Float32Array {}
    const sub = new Tagged(4);
    const w = checkTypedArray(sub, 'input', [Float32Array], 4);
    expect(Object.getPrototypeOf(w)).toBe(Float32Array.prototype);
    w[1] = 5;
    expect(sub[1]).toBe(5);
    expect(() => checkTypedArray(runInNewContext('new Float64Array(3)'), 'input', [Float32Array])).toThrow(/input: expected Float32Array, got Float64Array\(3\)/);
  });
  it('checkTypedArray reads the length from the buffer, not from an own length property, and refuses look-alikes', () => {
    const out = new Float32Array(4);
    Object.defineProperty(out, 'length', { value: 10 });
    expect(() => checkTypedArray(out, 'options.out', [Float32Array], 10)).toThrow(/expected length 10, got 4/);
    expect(checkTypedArray(out, 'options.out', [Float32Array], 4).length).toBe(4);
    const fake = Object.create(Float32Array.prototype) as Float32Array;
    expect(() => checkTypedArray(fake, 'input', [Float32Array])).toThrow(InvalidArgumentError);
    expect(() => checkTypedArray(new Proxy(new Float32Array(2), {}), 'input', [Float32Array])).toThrow(InvalidArgumentError);
    expect(() => checkTypedArray({ [Symbol.toStringTag]: 'Float32Array', length: 2 }, 'input', [Float32Array])).toThrow(/input: expected Float32Array/);
    expect(describeValue(3n)).toBe('3n (a BigInt)');
  });
  it('assertOneOf lists the allowed values', () => {
    expect(() => assertOneOf('wrap', 'boundary', ['zero', 'copy'])).toThrow(/boundary: expected one of "zero", "copy", got "wrap"/);
  });
  it('checkedProduct refuses sizes past the limit', () => {
    expect(checkedProduct('input', [2, 3, 4])).toBe(24);
    expect(() => checkedProduct('input', [2 ** 20, 2 ** 20], 2 ** 32)).toThrow(/input: total size/);
  });
});

describe('env and timing', () => {
  it('readEnumEnv takes values exactly as the command-line option does and names the variable otherwise', () => {
    expect(readEnumEnv('KERNELKIT_BACKEND', ['cpu', 'webgpu'], { KERNELKIT_BACKEND: 'cpu' })).toBe('cpu');
    for (const v of [' CPU ', 'CPU', ' cpu', 'cpu\n']) {
      expect(() => readEnumEnv('KERNELKIT_BACKEND', ['cpu', 'webgpu'], { KERNELKIT_BACKEND: v }), JSON.stringify(v)).toThrow(/KERNELKIT_BACKEND: environment variable must be one of cpu, webgpu/);
    }
    expect(readEnumEnv('KERNELKIT_BACKEND', ['cpu'], {})).toBeUndefined();
    expect(() => readEnumEnv('KERNELKIT_BACKEND', ['cpu'], { KERNELKIT_BACKEND: 'cuda' })).toThrow(/KERNELKIT_BACKEND: environment variable must be one of cpu, got "cuda"/);
  });
  it('median of odd and even counts, unsorted input untouched, NaN when empty', () => {
    const xs = [5, 1, 3];
    expect(median(xs)).toBe(3);
    expect(xs).toEqual([5, 1, 3]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
  it('makeTiming keeps only defined parts', () => {
    expect(makeTiming({ totalMs: 5, kernelMs: undefined, uploadMs: 1 })).toEqual({ totalMs: 5, uploadMs: 1 });
  });
});
