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
# One command may run at most 600 s, so the script takes a part: bench (the nine rows), studies
# (settling and overhead), shared-cache, misses,
# gpu-rows or process-state. Pack with GPU_HOST_PACK_LEAN=1. Everything in $OUT/s37-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
part=${1:?usage: gpu-host-2026-12-02-s37.sh bench|studies|shared-cache|misses|gpu-rows|process-state}
host_begin
case "$part" in
  studies)
    timeout 240 node apps/studies/dist/router/settling.js --workload seed --cases stencil-256-s10 --calls 80 --direct > "$OUT/settling.txt" 2> "$OUT/settling.log"; echo "settling rc=$?"
    timeout 240 node apps/studies/dist/router/overhead.js --workload seed --cases stencil-256-s10 --rounds 11 --processes 3 --modes child > "$OUT/overhead.txt" 2> "$OUT/overhead.log"; echo "overhead rc=$?" ;;
  shared-cache)
    timeout 300 node apps/studies/dist/router/shared-cache.js --workload seed --cases scan-40M-u32,convlayer-L2-b100 --processes 4 --calls 300 > "$OUT/shared-cache.md" 2> "$OUT/shared-cache.log"; echo "shared-cache rc=$?" ;;
  bench)
    bench s37 560 --op conv2d,stencil3d,scan,convLayer,gridSearch --case conv2d-16x2048-k11,stencil-64-s100,stencil-512-s10,scan-400M-f32,convlayer-L1-b1000,convlayer-L1-b10000,convlayer-L2-b10000,grid-cs610-8,grid-cs610-full --backend $ROUTER_RACE_BACKENDS --variant $ROUTER_RACE_VARIANTS --rounds 3 --no-floor ;;
  misses)
    # The two rows over 1.1x in s36/s36b, in more processes: is the gap the router's or the process's?
    bench s37-misses 330 --op stencil3d,convLayer --case stencil-256-s10,convlayer-L2-b100 --backend $ROUTER_RACE_BACKENDS --variant $ROUTER_RACE_VARIANTS --rounds 7 --no-floor ;;
  gpu-rows)
    # A second process each for WebGPU and the router on the six rows where WebGPU was the best row.
    bench s37-gpu-rows 270 --op conv2d,stencil3d,convLayer,gridSearch --case conv2d-16x2048-k11,stencil-64-s100,stencil-512-s10,convlayer-L2-b10000,grid-cs610-8,grid-cs610-full --backend webgpu,kernelkit --variant auto,streamed,pruned,routed --rounds 1 --no-floor ;;
  process-state)
    # stencil3d 256^3 on WebGPU alone, beside an idle or disposed pool, and settled in the router.
    for i in 1 2; do for s in alone pool-idle router pool-gone; do
      KK_SAMPLES=60 timeout 80 node benchmarks/scripts/webgpu-process-state.mjs $s stencil-256-s10 streamed 2>> "$OUT/ps.log" | grep '^{' >> "$OUT/process-state.txt"
    done; done ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "s37-$part"
