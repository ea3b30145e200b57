import { BUF } from './usage.js';

/**
 * GPU clock warm-up for timed runs. While an op works on the CPU (writeBuffer of its input) the
 * GPU idles down to its idle clock, and a kernel a few ms long then runs entirely at that clock
 * (seen with nvidia-smi on the H100 host; apps/studies ceilings.js --ramp measures it). Timed
 * executes therefore run an FMA spin (its own untimed pass, same command buffer, right before
 * the timed pass) long enough for the clocks to ramp; kernel ms then measures the kernel at the
 * clocks a busy GPU runs at. Total ms still includes the warm-up: it is the honest end-to-end.
 */
const SPIN_WGSL = `struct P { iters: u32, a: u32, b: u32, c: u32 }
@group(0) @binding(0) var<storage, read_write> sink: array<f32>;
@group(0) @binding(1) var<uniform> p: P;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3u) {
  var a = f32(g.x) * 1e-9; var b = a + 1.0; var c = a + 2.0; var d = a + 3.0;
  for (var k = 0u; k < p.iters; k++) { a = fma(a, 0.999, 1e-7); b = fma(b, 0.999, 1e-7); c = fma(c, 0.999, 1e-7); d = fma(d, 0.999, 1e-7); }
  // Data-dependent, practically never-true store: the loop cannot be optimised away.
  if (a + b + c + d == 12345.678) { sink[g.x % 64u] = a; }
}`;

/** Workgroups in one spin dispatch: enough to fill every SM of a large GPU. */
const SPIN_GROUPS = 1056;
/** FMA iterations per ms at full clock for that dispatch (about 60 TFLOP/s ⇒ ~27 000 iterations/ms). */
const ITERS_PER_MS = 27_000;

export class ClockWarmUp {
  private readonly pipeline: GPUComputePipeline;
  private readonly bindGroup: GPUBindGroup;
  private readonly buffers: readonly GPUBuffer[];
  constructor(device: GPUDevice, readonly ms: number) {
    const module = device.createShaderModule({ code: SPIN_WGSL, label: 'clock-warmup' });
    this.pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' }, label: 'clock-warmup' });
    const sink = device.createBuffer({ size: 256, usage: BUF.STORAGE });
    const params = device.createBuffer({ size: 16, usage: BUF.UNIFORM | BUF.COPY_DST });
    this.buffers = [sink, params];
    device.queue.writeBuffer(params, 0, new Uint32Array([Math.max(1, Math.round(ms * ITERS_PER_MS)), 0, 0, 0]));
    this.bindGroup = device.createBindGroup({ layout: this.pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: sink } }, { binding: 1, resource: { buffer: params } }] });
  }

  /** Encodes the spin as its own (untimed) pass. */
  encode(enc: GPUCommandEncoder): void {
    if (this.ms <= 0) return;
    const pass = enc.beginComputePass();
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, this.bindGroup);
    pass.dispatchWorkgroups(SPIN_GROUPS);
    pass.end();
  }

  destroy(): void {
    for (const b of this.buffers) b.destroy();
  }
}
