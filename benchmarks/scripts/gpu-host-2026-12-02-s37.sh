#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-02-s37.sh
# Issue 16, prepared on 2026-12-02 when no device time was left:
# 1. stencil3d 256^3 x 10 steps ran 1.15x through the router in every process (s36b) with the same
#    upload, kernel and readback as webgpu/streamed's own row, while its trial in the same process
#    measured 24.4 ms (the row's own 24.2): the settling study shows whether the settled calls
#    alone are slower, and the overhead study whether routed calls pay more than direct ones.
# 2. Where a machine's processes share one calibration cache (a cached close race is raced again
#    once per process): shared-cache.js on the seed rows that were close races on the H200.
# 3. The seed bench's other nine router rows, last measured on 2026-12-01 (before the trial-time change).
# Pack with GPU_HOST_PACK_LEAN=1. Everything in $OUT/s37.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
timeout 240 node apps/studies/dist/router/settling.js --workload seed --cases stencil-256-s10 --calls 80 --direct > "$OUT/settling.txt" 2> "$OUT/settling.log"; echo "settling rc=$?"
timeout 240 node apps/studies/dist/router/overhead.js --workload seed --cases stencil-256-s10 --rounds 11 --processes 3 --modes child > "$OUT/overhead.txt" 2> "$OUT/overhead.log"; echo "overhead rc=$?"
timeout 300 node apps/studies/dist/router/shared-cache.js --workload seed --cases scan-40M-u32,convlayer-L2-b100 --processes 4 --calls 300 > "$OUT/shared-cache.md" 2> "$OUT/shared-cache.log"; echo "shared-cache rc=$?"
bench s37 560 --op conv2d,stencil3d,scan,convLayer,gridSearch --case conv2d-16x2048-k11,stencil-64-s100,stencil-512-s10,scan-400M-f32,convlayer-L1-b1000,convlayer-L1-b10000,convlayer-L2-b10000,grid-cs610-8,grid-cs610-full --backend $ROUTER_RACE_BACKENDS --variant $ROUTER_RACE_VARIANTS --rounds 3 --no-floor
host_end s37
