import { DeviceError } from '@kernelkit/core';
import { DEVICE_LIMITS } from './adapter.js';
import { BufferPool } from './buffer-pool.js';
import { ClockWarmUp } from './clock-warmup.js';
import type { BufferLedger } from './ledger.js';
import { TimestampTimer } from './timestamps.js';
import { StagingPool, type StagingShape } from './transfer.js';

/**
 * The uncaptured-error handler (errors are collected through error scopes instead). Module-level
 * on purpose: Dawn holds the handler strongly, and a closure made in the Generation constructor
 * would keep the constructor's context, hence the device, alive, leaking memory on every
 * create → dispose cycle (the reliability study's RSS check catches it).
 */
const IGNORE_UNCAPTURED = (): void => {};

/** What requestDevice is given: kept so a lost device is recreated with the same limits and features. */
export interface DeviceRequest {
  readonly requiredLimits: Record<string, number>;
  readonly requiredFeatures: GPUFeatureName[];
}

/** Every limit of DEVICE_LIMITS at the adapter's maximum, plus the optional features the kernels use. */
export function deviceRequest(adapter: GPUAdapter): DeviceRequest {
  const requiredLimits: Record<string, number> = {};
  for (const k of DEVICE_LIMITS) requiredLimits[k] = Number(adapter.limits[k]);
  const requiredFeatures: GPUFeatureName[] = [];
  for (const f of ['subgroups', 'timestamp-query'] as const) if (adapter.features.has(f)) requiredFeatures.push(f);
  return { requiredLimits, requiredFeatures };
}

/**
 * One GPUDevice and everything made on it: buffer pool, staging rings, pipeline cache, timer,
 * clock warm-up.
 * Objects of one device are invalid on another, so a generation is never reused: when its
 * device is lost it is retired (everything destroyed) and a new generation replaces it.
 */
export class Generation {
  readonly pool: BufferPool;
  /** Host ↔ GPU transfers (runtime/transfer.ts); replaced only between calls (see GpuDevice.setStaging). */
  staging: StagingPool;
  readonly pipelines = new Map<string, GPUComputePipeline>();
  readonly timer: TimestampTimer | undefined;
  warmUp: ClockWarmUp | undefined;
  /** `reason: message` once the device is lost. */
  lostReason: string | undefined;
  retired = false;
  /** Rejects with DeviceError when the device is lost; raced against every GPU wait. */
  readonly lost: Promise<never>;

  constructor(
    readonly id: number,
    readonly device: GPUDevice,
    private readonly ledger: BufferLedger,
    staging: StagingShape,
    poolIdleBytes: number,
    onLost: (g: Generation) => void,
  ) {
    ledger.instrument(device, id);
    this.pool = new BufferPool(device, ledger, id, poolIdleBytes);
    this.staging = this.stagingPool(staging);
    ledger.owning = true;
    try {
      this.timer = device.features.has('timestamp-query') ? new TimestampTimer(device) : undefined;
    } finally {
      ledger.owning = false;
    }
    this.lost = device.lost.then((i) => {
      this.lostReason = `${i.reason}: ${i.message}`;
      onLost(this);
      throw new DeviceError(`the WebGPU device was lost (${this.lostReason})`);
    });
    // Nobody may await `lost`; keep the rejection from becoming an unhandled one.
    this.lost.catch(() => {});
    device.onuncapturederror = IGNORE_UNCAPTURED;
  }

  /** A staging pool on this device; its waits are raced against this device's loss. */
  stagingPool(shape: StagingShape): StagingPool {
    return new StagingPool({ device: this.device, ledger: this.ledger, race: (p) => Promise.race([p, this.lost]) }, shape);
  }

  /** Replaces the clock warm-up (0 ms: none); needs timestamps, since only timed passes use it. */
  setWarmUp(ms: number): void {
    this.ledger.owning = true;
    try {
      this.warmUp?.destroy();
      this.warmUp = ms > 0 && this.timer !== undefined && !this.retired ? new ClockWarmUp(this.device, ms) : undefined;
    } finally {
      this.ledger.owning = false;
    }
  }

  /** Destroys every buffer made on the device, drops its pipelines, then destroys the device. Idempotent. */
  retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.staging.destroy();
    this.pool.close();
    this.pipelines.clear();
    this.timer?.destroy();
    this.warmUp?.destroy();
    this.warmUp = undefined;
    this.ledger.retire(this.id);
    this.device.onuncapturederror = null; // Dawn's strong reference to the handler goes too
    this.device.destroy();
  }
}
