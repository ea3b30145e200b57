#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-28-s22.sh
# The seed rows last run before the router kept settled routes (convLayer L1 and L2 at B=100), on
# piscina, webgpu and the router, 5 processes each; everything in $OUT/s22.tar.gz.
# Pack with GPU_HOST_PACK_LEAN=1 (the full pack and the checkout pass the 64 MiB carry limit).
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
bench convsmall 480 --op convLayer --case convlayer-L1-b100,convlayer-L2-b100 \
  --backend piscina,webgpu,kernelkit --variant wasm-simd,auto,gemm,routed --rounds 5 --no-floor
host_end s22
