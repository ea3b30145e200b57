#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s31c.sh
# After uploads of up to 2 MiB moved to queue.writeBuffer: webgpu-small-uploads.mjs again (3 and
# 3.5 MiB added), then WebGPU's small seed rows, 3 processes. Everything in $OUT/s31c.tar.gz.
# Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
timeout 60 node benchmarks/scripts/webgpu-small-uploads.mjs > "$OUT/small-uploads.txt" 2> "$OUT/small-uploads.log"; echo "uploads rc=$?"
cat "$OUT/small-uploads.txt"
bench small-rows 150 --op stencil3d,convLayer --case stencil-64-s100,convlayer-L1-b100,convlayer-L2-b100 --backend webgpu --variant streamed,auto --rounds 3 --no-floor
host_end s31c
