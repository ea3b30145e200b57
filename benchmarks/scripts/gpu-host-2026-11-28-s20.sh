#!/usr/bin/env bash
# Run on the GPU host (an H200 this session; the H100 is no longer lent) after `. .gpu-host/on-host.sh`:
#   bash benchmarks/scripts/gpu-host-2026-11-28-s20.sh
# One device call, everything in $OUT/s20.tar.gz (the host returns at most 8 files):
#   probes: stencil3d 64^3 x 100 on WebGPU alone, after one call of each large seed case
#           (big-first), the same without the fresh-output worker threads (big-first-noprefault),
#           on a new backend after those calls (big-first-fresh), and after only making the large
#           inputs (make-first); two of them with a self-time profile of the timed calls
#   rows:   the seed rows the router missed by more than 1.1x on the H100 (stencil3d 64^3 x 100,
#           scan 40M f32, convLayer L2 B=1000), with the bench's warm start, 5 processes each
# Two more calls followed on the same machine, each `. .gpu-host/on-host.sh && . benchmarks/scripts/h100-bench.sh &&`:
#   bench convsmall 400 --op convLayer --case convlayer-L1-b100,convlayer-L2-b100,convlayer-L1-b1000 \
#     --backend piscina,webgpu,kernelkit --variant wasm-simd,auto,gemm,routed --rounds 5 --no-floor
#   bench scanu32 190 --case scan-40M-u32 --backend webgpu,kernelkit --variant decoupled-subgroups,routed --rounds 5 --no-floor
# Pack with GPU_HOST_PACK_LEAN=1 (the full pack and the checkout pass the 64 MiB carry limit).
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
t0=$SECONDS
for s in alone big-first big-first-noprefault big-first-fresh make-first alone big-first big-first-noprefault; do
  [ $((SECONDS - t0)) -lt 170 ] && probe "$s"
done
KK_PROFILE=12 probe alone
KK_PROFILE=12 probe big-first
echo "probes $((SECONDS - t0)) s"
bench stencil64 130 --case stencil-64-s100 --backend webgpu,kernelkit --variant streamed,routed --rounds 5 --no-floor
bench scanf32 110 --case scan-40M-f32 --backend webgpu,kernelkit --variant decoupled-subgroups,routed --rounds 5 --no-floor
rem=$((500 - SECONDS))
[ $rem -gt 40 ] && bench l2b1000 $rem --case convlayer-L2-b1000 --backend piscina,webgpu,kernelkit --variant wasm-simd,auto,gemm,routed --rounds 5 --no-floor
host_end s20
