#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-28-s22d.sh
# The CPU kernels' two WebAssembly builds on 16 cores: every seed conv row on piscina (16 threads)
# with the plain build (what Node 20 runs) and with KERNELKIT_WASM_SIMD=relaxed (fused multiply-add,
# what Node 22 runs), twice each, alternating; everything in $OUT/s22d.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
for i in 1 2; do
  bench plain$i 130 --op conv2d,convLayer --backend piscina --variant wasm-simd --no-floor
  KERNELKIT_WASM_SIMD=relaxed bench relaxed$i 130 --op conv2d,convLayer --backend piscina --variant wasm-simd --no-floor
done
host_end s22d
