import { randomF32 } from '../common/random.js';
import type { ConvLayerArgs } from './types.js';

export interface ConvLayerWorkload {
  readonly id: string;
  readonly label: string;
  readonly batch: number;
  readonly channels: number;
  readonly height: number;
  readonly width: number;
  readonly maps: number;
  readonly k: number;
}

const L1 = { channels: 1, height: 86, width: 86, maps: 4, k: 7 } as const;
const L2 = { channels: 4, height: 40, width: 40, maps: 16, k: 7 } as const;

/** The two ECE408 layers at the course reports' batch sizes. */
export const CONV_LAYER_WORKLOADS = {
  small: [
    { id: 'convlayer-L1-b100', label: 'L1 C1 M4 86² K7, B=100', batch: 100, ...L1 },
    { id: 'convlayer-L2-b100', label: 'L2 C4 M16 40² K7, B=100', batch: 100, ...L2 },
  ],
  /** The sizes of the course reports the project grew from (the bench's `--workload seed`). */
  seed: [100, 1000, 10000].flatMap((b) => [
    { id: `convlayer-L1-b${b}`, label: `L1 C1 M4 86² K7, B=${b}`, batch: b, ...L1 },
    { id: `convlayer-L2-b${b}`, label: `L2 C4 M16 40² K7, B=${b}`, batch: b, ...L2 },
  ]),
} as const satisfies Record<string, readonly ConvLayerWorkload[]>;

export function makeConvLayerArgs(w: Omit<ConvLayerWorkload, 'id' | 'label'>, seed = 1): ConvLayerArgs {
  return {
    input: randomF32(w.batch * w.channels * w.height * w.width, seed, 0, 1),
    weights: randomF32(w.maps * w.channels * w.k * w.k, seed + 1, -0.5, 0.5),
    batch: w.batch,
    channels: w.channels,
    height: w.height,
    width: w.width,
    maps: w.maps,
    k: w.k,
  };
}
