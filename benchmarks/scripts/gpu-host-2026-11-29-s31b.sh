#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s31b.sh
# Small uploads through the staging ring against queue.writeBuffer (webgpu-small-uploads.mjs), two
# processes. Everything in $OUT/s31b.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
for i in 1 2; do timeout 60 node benchmarks/scripts/webgpu-small-uploads.mjs >> "$OUT/small-uploads.txt" 2>> "$OUT/small-uploads.log"; echo "run $i rc=$?"; done
cat "$OUT/small-uploads.txt"
host_end s31b
