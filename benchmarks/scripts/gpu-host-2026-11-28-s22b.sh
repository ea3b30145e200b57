#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-28-s22b.sh
# The seed rows whose router row was last measured before it kept settled routes (stencil3d 64^3 x 100,
# scan 40M f32 and u32, 5 processes each; convLayer L1 and L2 B=1000, 3 processes each), on the row's
# contenders and the router; everything in $OUT/s22b.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
bench stencil64 120 --case stencil-64-s100 --backend piscina,webgpu,kernelkit --variant wasm-simd,streamed,routed --rounds 5 --no-floor
bench scan40 200 --case scan-40M-f32,scan-40M-u32 --backend piscina,webgpu,kernelkit --variant wasm-simd,decoupled-subgroups,routed --rounds 5 --no-floor
rem=$((570 - SECONDS))
bench b1000 $rem --case convlayer-L1-b1000,convlayer-L2-b1000 --backend piscina,webgpu,kernelkit --variant wasm-simd,auto,gemm,routed --rounds 3 --no-floor
host_end s22b
