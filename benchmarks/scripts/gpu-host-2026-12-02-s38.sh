#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-02-s38.sh PART
# Issue 16, prepared on 2026-12-02 for the next session with device time. The nine seed rows of
# bench-seed-h200-2026-12-02-s38.md had one process each for WebGPU and the router:
# piscina-rows: the three rows Piscina won or tied (scan 400M f32, convLayer L1 B=1000 and B=10 000)
#   in 3 processes per backend; the bench now records where the router's timed calls went, which
#   says whether its scan 400M calls (352 ms, with WebGPU's upload and readback adding up to 404)
#   ran on Piscina.
# gpu-rows: the six rows WebGPU won, WebGPU and the router in 3 processes each (Piscina was 1.4x or
#   more behind on every one).
# One command may run at most 600 s. Pack with GPU_HOST_PACK_LEAN=1. Everything in $OUT/s38-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
part=${1:?usage: gpu-host-2026-12-02-s38.sh piscina-rows|gpu-rows}
host_begin
case "$part" in
  piscina-rows)
    bench s38-piscina-rows 560 --op scan,convLayer --case scan-400M-f32,convlayer-L1-b1000,convlayer-L1-b10000 --backend $ROUTER_RACE_BACKENDS --variant $ROUTER_RACE_VARIANTS --rounds 3 --no-floor ;;
  gpu-rows)
    bench s38-gpu-rows 560 --op conv2d,stencil3d,convLayer,gridSearch --case conv2d-16x2048-k11,stencil-64-s100,stencil-512-s10,convlayer-L2-b10000,grid-cs610-8,grid-cs610-full --backend webgpu,kernelkit --variant auto,streamed,pruned,routed --rounds 3 --no-floor ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "s38-$part"
