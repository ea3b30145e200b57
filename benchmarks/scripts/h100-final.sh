#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: the gpu.js bench in webgpu mode, then the
# cross-backend tinybench app on the seed workload (the course reports' sizes) for the ops that
# fit one 10-minute call.
set -u
timeout 240 node apps/studies/dist/gpujs/compare.js --out "$OUT" --mode webgpu > "$OUT/gpujs.log" 2>&1; echo "gpujs compare rc=$?"
tail -16 "$OUT/gpujs.log"
timeout 320 node apps/bench/dist/cli.js --workload seed --op stencil3d,scan,gridSearch --no-progress --out "$OUT/bench" > "$OUT/bench.log" 2>&1; echo "bench rc=$?"
tail -45 "$OUT/bench.log"
