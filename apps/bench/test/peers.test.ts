/**
 * The peers against the f64 reference on small shapes. onnxruntime-node and the tfjs packages are
 * dev dependencies of the bench, so `npm ci` installs them: a missing one fails here, not skips.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConv2dArgs, makeConvLayerArgs, randomF32, verifyResult, type Conv2dArgs, type ConvLayerArgs } from '@kernelkit/ops';
import { createCpuBackend } from '@kernelkit/cpu';
import { openBackend } from '../src/backends.js';
import { runBench } from '../src/run.js';
import { openOnnxruntime } from '../src/peers/onnxruntime.js';
import { openTfjsWasm } from '../src/peers/tfjs-wasm.js';
import type { Peer } from '../src/peers/peer.js';
import { convModel } from '../src/peers/onnx-model.js';
import { openError } from '../src/peers/index.js';

const conv2dCases: readonly Conv2dArgs[] = [
  makeConv2dArgs({ batch: 2, height: 9, width: 7, k: 3 }),
  makeConv2dArgs({ batch: 1, height: 16, width: 5, k: 5 }),
  // A filter wider than the image: every tap outside reads zero.
  makeConv2dArgs({ batch: 1, height: 4, width: 3, k: 7 }),
];
const layerCases: readonly ConvLayerArgs[] = [
  makeConvLayerArgs({ batch: 2, channels: 3, height: 10, width: 9, maps: 4, k: 3 }),
  makeConvLayerArgs({ batch: 1, channels: 1, height: 6, width: 6, maps: 2, k: 6 }),
  { ...makeConvLayerArgs({ batch: 2, channels: 2, height: 8, width: 7, maps: 3, k: 3 }), bias: randomF32(3, 9, -1, 1), relu: true },
];

const peers: [string, () => Promise<Peer>][] = [
  ['onnxruntime', () => openOnnxruntime(2)],
  ['tfjs-wasm', () => openTfjsWasm()],
];

describe.each(peers)('%s', (name, open) => {
  let peer: Peer;
  beforeAll(async () => {
    peer = await open();
  });
  afterAll(async () => {
    await peer?.dispose();
  });

  it('has rows for conv2d and convLayer only', () => {
    expect(peer.variants('conv2d').length).toBeGreaterThan(0);
    expect(peer.variants('convLayer')).toEqual(peer.variants('conv2d'));
    expect(peer.variants('scan')).toEqual([]);
    expect(peer.variants('stencil3d')).toEqual([]);
    expect(peer.variants('gridSearch')).toEqual([]);
  });

  it('conv2d matches the f64 reference (same padding) in every variant', async () => {
    for (const variant of peer.variants('conv2d')) {
      for (const a of conv2dCases) {
        const { data } = await peer.run('conv2d', a, variant);
        expect(verifyResult('conv2d', a, data as Float32Array), `${variant} ${a.height}x${a.width} k=${a.k}`).toBeUndefined();
      }
    }
  });

  it('convLayer matches the f64 reference (valid padding, bias and ReLU when given) in every variant', async () => {
    for (const variant of peer.variants('convLayer')) {
      for (const a of layerCases) {
        const { data } = await peer.run('convLayer', a, variant);
        expect(verifyResult('convLayer', a, data as Float32Array), `${variant} C${a.channels} M${a.maps} k=${a.k}`).toBeUndefined();
      }
    }
  });

  it('refuses bad input with the named error of @kernelkit/ops, and unknown variants', async () => {
    await expect(peer.run('conv2d', { ...conv2dCases[0]!, k: 4 }, peer.variants('conv2d')[0]!)).rejects.toThrow(/\bk\b.*odd/);
    await expect(peer.run('conv2d', conv2dCases[0]!, 'nope')).rejects.toThrow(/no variant nope/);
  });
});

describe('peers keep what they build per case', () => {
  it('onnxruntime makes one session per case and thread count, not one per call', async () => {
    let sessions = 0;
    const peer = await openOnnxruntime(2, { onSession: () => void sessions++ });
    try {
      for (let i = 0; i < 3; i++) for (const v of peer.variants('conv2d')) await peer.run('conv2d', conv2dCases[0]!, v);
      expect(sessions).toBe(2);
      await peer.run('convLayer', layerCases[0]!, '1t');
      expect(sessions).toBe(3);
    } finally {
      await peer.dispose();
    }
  });

  it('tfjs-wasm converts a filter once and frees every per-call tensor', async () => {
    const tf = await import('@tensorflow/tfjs-core');
    const peer = await openTfjsWasm();
    try {
      await peer.run('convLayer', layerCases[0]!, '1t');
      const after1 = tf.memory().numTensors;
      for (let i = 0; i < 3; i++) await peer.run('convLayer', layerCases[0]!, '1t');
      expect(tf.memory().numTensors).toBe(after1);
    } finally {
      await peer.dispose();
    }
  });
});

describe('peers in the bench', () => {
  it('say what they run on: library, version, threads, SIMD', async () => {
    const ort = await openBackend('onnxruntime', 4);
    const tfjs = await openBackend('tfjs-wasm', undefined);
    try {
      expect(ort.status === 'ok' && ort.backend.info.description).toMatch(/^onnxruntime-node \d+\.\d+\.\d+, .*intra-op threads 1 or 4.*\(.+ on this CPU\)/);
      expect(ort.status === 'ok' && ort.backend.variants('convLayer')).toEqual(['1t', '4t']);
      expect(tfjs.status === 'ok' && tfjs.backend.info.description).toMatch(/^@tensorflow\/tfjs-backend-wasm \d+\.\d+\.\d+, WebAssembly SIMD on, 1 thread$/);
    } finally {
      if (ort.status === 'ok') await ort.backend.dispose();
      if (tfjs.status === 'ok') await tfjs.backend.dispose();
    }
  });

  it('a peer without a counterpart of the selected ops is listed as skipped, with no rows', async () => {
    const unused = async (): Promise<never> => {
      throw new Error('only the cpu backend runs here');
    };
    const r = await runBench(
      { workload: 'tiny', ops: ['scan'], cases: ['scan-10k-u32'], backends: ['cpu', 'onnxruntime'], progress: false },
      { loaders: { cpu: async () => createCpuBackend(), piscina: unused, webgpu: unused, gpujs: unused } },
    );
    expect(r.backends.find((b) => b.backend === 'onnxruntime')).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/conv2d and convLayer only/) });
    expect(r.rows.filter((row) => row.backend === 'onnxruntime')).toEqual([]);
  });

  it('a peer whose package is missing says so with the install command', () => {
    const err = Object.assign(new Error("Cannot find package 'onnxruntime-node' imported from x.js"), { code: 'ERR_MODULE_NOT_FOUND' });
    expect(openError('onnxruntime', err).message).toBe(
      "not installed (Cannot find package 'onnxruntime-node' imported from x.js); install it with: npm install -w @kernelkit/bench -D onnxruntime-node",
    );
    const other = new Error('tfjs-backend-wasm did not initialise');
    expect(openError('tfjs-wasm', other)).toBe(other);
  });

  it('the ONNX model is plain protobuf: ModelProto field 1 (ir_version) first', () => {
    const bytes = convModel({ inputShape: [1, 1, 3, 3], weightShape: [1, 1, 3, 3], outputShape: [1, 1, 3, 3], weights: new Float32Array(9), pad: 1 });
    expect([...bytes.subarray(0, 2)]).toEqual([0x08, 8]);
    // The weights travel as raw_data: 36 zero bytes somewhere in the model.
    expect(Buffer.from(bytes).includes(Buffer.alloc(36))).toBe(true);
  });
});
