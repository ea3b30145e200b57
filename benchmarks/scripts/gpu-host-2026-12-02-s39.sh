#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-02-s39.sh PART
# Issue 16. In bench-seed-h200-2026-12-02-s39-gpu-rows.md the router ran convLayer L2 B=10 000 on
# WebGPU's own variant with the same kernel time, yet 1.14x slower, its upload and readback ~10%
# slower. process-state: that case on WebGPU alone, beside an idle pool, beside an idle pool and cpu
# backend, and settled in the router, two processes each, interleaved.
# tight-rows: the two rows of -s39-gpu-rows at 1.10x and over (conv2d 16x2048^2 K=11, convLayer L2
#   B=10 000), WebGPU and the router in 5 processes each, on the code with close races in alternating blocks.
# One command may run at most 600 s. Pack with GPU_HOST_PACK_LEAN=1. Everything in $OUT/s39-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
part=${1:?usage: gpu-host-2026-12-02-s39.sh process-state|tight-rows}
host_begin
case "$part" in
  process-state)
    for i in 1 2; do for s in alone pool-idle router both-idle; do
      KK_SAMPLES=40 KK_WARM_CALLS=20 timeout 110 node benchmarks/scripts/webgpu-process-state.mjs $s convlayer-L2-b10000 auto 2>> "$OUT/ps.log" | grep '^{' >> "$OUT/process-state.txt"
      [ "$SECONDS" -gt 540 ] && break 2
    done; done ;;
  tight-rows)
    bench s39-tight-rows 380 --op conv2d,convLayer --case conv2d-16x2048-k11,convlayer-L2-b10000 --backend webgpu,kernelkit --variant auto,routed --rounds 5 --no-floor ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "s39-$part"
