#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-28-s22c.sh
# `kernelkit calibrate` from an empty cache (its time against issue 16's 60 s bound), then issue 19's
# 16-core table (SKIP_CALIBRATE=1 leaves the calibration out) on the current kernels: every seed conv row on piscina (16 threads) beside
# onnxruntime-node on 16 intra-op threads, with the memory floor probes; everything in $OUT/s22c.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
t0=$SECONDS
[ "${SKIP_CALIBRATE:-0}" = 1 ] || KERNELKIT_CALIBRATION_CACHE="$OUT/calibration.json" timeout 120 node packages/kernelkit/bin/kernelkit.js calibrate > "$OUT/calibrate.txt" 2> "$OUT/calibrate.log"
[ "${SKIP_CALIBRATE:-0}" = 1 ] || echo "calibrate rc=$? $((SECONDS - t0)) s" | tee -a "$OUT/calibrate.txt"
bench conv16 $((560 - SECONDS)) --op conv2d,convLayer --backend piscina,onnxruntime --variant wasm-simd,16t
host_end s22c
