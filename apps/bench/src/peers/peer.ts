import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { OpArgs, OpData, OpName } from '@kernelkit/ops';

/** Libraries a user might pick instead of kernelkit, measured beside it for comparison only (never behind the facade). */
export const PEER_NAMES = ['onnxruntime', 'tfjs-wasm'] as const;
export type PeerName = (typeof PEER_NAMES)[number];
export const isPeer = (name: string): name is PeerName => (PEER_NAMES as readonly string[]).includes(name);

/** The ops the peers have a counterpart of. */
export const PEER_OPS: readonly OpName[] = ['conv2d', 'convLayer'];

/** What `--backend` names when a peer's package is missing. */
export const PEER_INSTALL: Readonly<Record<PeerName, string>> = {
  onnxruntime: 'npm install -w @kernelkit/bench -D onnxruntime-node',
  'tfjs-wasm': 'npm install -w @kernelkit/bench -D @tensorflow/tfjs-core @tensorflow/tfjs-backend-wasm',
};

export interface PeerOutput {
  readonly data: OpData<OpName>;
  readonly notes?: readonly string[];
}

/** A peer library behind the few calls the bench makes. */
export interface Peer {
  readonly name: PeerName;
  readonly description: string;
  variants(op: OpName): readonly string[];
  run(op: OpName, args: OpArgs<OpName>, variant: string): Promise<PeerOutput>;
  dispose(): Promise<void>;
}

/** The CPU's widest x86 SIMD extension as the kernel reports it (the peers' native kernels pick theirs at run time). */
export function cpuSimd(): string {
  if (os.platform() !== 'linux') return os.arch();
  try {
    const flags = /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.split(' ') ?? [];
    return flags.includes('avx512f') ? 'AVX-512' : flags.includes('avx2') ? 'AVX2' : flags.includes('sse4_2') ? 'SSE4.2' : os.arch();
  } catch {
    return os.arch();
  }
}
