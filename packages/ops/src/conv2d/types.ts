/** 2-D correlation of a batch of single-channel images with one odd K×K filter, zero padding. */
export interface Conv2dArgs {
  /** `[batch][height][width]`, row-major. */
  readonly input: Float32Array;
  /** `[k][k]`, row-major. */
  readonly filter: Float32Array;
  /** Number of images; default 1. */
  readonly batch?: number;
  readonly height: number;
  readonly width: number;
  /** Filter size, odd, >= 1. May exceed the image (outside pixels read as 0). */
  readonly k: number;
}

/** Validated arguments with defaults applied. */
export interface Conv2dProblem {
  readonly input: Float32Array;
  readonly filter: Float32Array;
  readonly batch: number;
  readonly height: number;
  readonly width: number;
  readonly k: number;
}
