/**
 * The ECE408 / EECS 471 convolution layer: stride 1, no padding,
 * `out[b][m][h][w] = Σ_c Σ_p Σ_q in[b][c][h+p][w+q] · wt[m][c][p][q]`.
 */
export interface ConvLayerArgs {
  /** `[batch][channels][height][width]`. */
  readonly input: Float32Array;
  /** `[maps][channels][k][k]`. */
  readonly weights: Float32Array;
  readonly batch: number;
  readonly channels: number;
  readonly height: number;
  readonly width: number;
  /** Output feature maps (M). */
  readonly maps: number;
  /** Kernel size, 1 <= k <= min(height, width). */
  readonly k: number;
  /** Optional fused bias, length `maps`. Off by default. */
  readonly bias?: Float32Array;
  /** Optional fused ReLU. Off by default. */
  readonly relu?: boolean;
}

export interface ConvLayerProblem {
  readonly input: Float32Array;
  readonly weights: Float32Array;
  readonly batch: number;
  readonly channels: number;
  readonly height: number;
  readonly width: number;
  readonly maps: number;
  readonly k: number;
  readonly bias: Float32Array | undefined;
  readonly relu: boolean;
  readonly outHeight: number;
  readonly outWidth: number;
}
