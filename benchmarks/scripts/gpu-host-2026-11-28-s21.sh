#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-28-s21.sh
# One device call, everything in $OUT/s21.tar.gz (the host returns at most 8 files):
#   probes: stencil3d 64^3 x 100 on WebGPU alone, after one call of each large seed case (big-first),
#           the same with a new result memory (big-first-newresults) or a new backend (big-first-fresh),
#           and after only making scan 400M's input (make-first); every line counts the results taken,
#           reused and the collections prompted during the timed calls
#   rows:   the large conv rows of the seed workload not yet run on the H200 (conv2d 16x2048^2 K11,
#           8192^2 K5, convLayer L1/L2 B=10000) on piscina, webgpu and the router, 3 processes each
# Pack with GPU_HOST_PACK_LEAN=1 (the full pack and the checkout pass the 64 MiB carry limit).
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
t0=$SECONDS
for s in alone big-first big-first-newresults big-first-fresh make-first alone big-first-newresults big-first make-first; do
  [ $((SECONDS - t0)) -lt 170 ] && probe "$s"
done
echo "probes $((SECONDS - t0)) s"
rem=$((560 - SECONDS))
bench conv $rem --case conv2d-16x2048-k11,conv2d-1x8192-k5,convlayer-L1-b10000,convlayer-L2-b10000 --backend piscina,webgpu,kernelkit --variant wasm-simd,auto,gemm,routed --rounds 3 --no-floor
host_end s21
