#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-03-s41.sh PART
# Issue 16's 2-core small workload on a 2-core slice of the host (taskset -c 2,3, the rest idle)
# with the GPU hidden (the Vulkan and EGL loaders pointed at no driver), so the router sees what a
# 2-core machine without a GPU offers: the cpu backend and a 2-thread pool. cpu, piscina and the
# router over 9 rounds (slice-all3: 3), the router's rows also timed side by side with the backends it weighed.
# slice-conv9: conv2d and convLayer; slice-stencil-grid9: stencil3d and the grid search;
# slice-scan9: scan; slice-all3: the whole small workload over 3 rounds, side by side in blocks of
# 4 back-to-back calls (the 9-round parts ran one call each per turn). One command may run at most 600 s. Everything in $OUT/s41-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
part=${1:?usage: gpu-host-2026-12-03-s41.sh slice-conv9|slice-stencil-grid9|slice-scan9|slice-all3}
export VK_DRIVER_FILES=/nonexistent/icd.json __EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/egl.json
T="taskset -c 2,3"
host_begin
{ $T node -p 'require("os").availableParallelism()'; } > "$OUT/slice.txt" 2>&1
small() {
  timeout ${BENCH_TIMEOUT:-560} $T node apps/bench/dist/cli.js --workload small --no-progress --backend cpu,piscina,kernelkit --variant wasm-simd,routed "$@" \
    --json "$OUT/bench-$part.json" --md "$OUT/bench-$part.md" > "$OUT/bench-$part.out" 2> "$OUT/bench-$part.log"
  echo "bench $part rc=$?"; grep -v '^Warning\|^    at \|^$' "$OUT/bench-$part.log" | tail -c 2500
}
case "$part" in
  slice-conv9) small --rounds 9 --op conv2d,convLayer ;;
  slice-stencil-grid9) small --rounds 9 --op stencil3d,gridSearch ;;
  slice-scan9) small --rounds 9 --op scan ;;
  slice-all3) small --rounds 3 ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "s41-$part"
