#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-02-s40.sh PART
# Issue 16's 2-core small workload on a 2-core slice of the host (taskset -c 2,3: two of its
# cores, the rest idle) with the GPU hidden (the Vulkan and EGL loaders pointed at no driver), so the
# router sees what a 2-core machine without a GPU offers: the cpu backend and a 2-thread pool. The dev
# VM's two cores share their caches and memory with other tenants.
# slice-conv: conv2d and convLayer; slice-rest: stencil3d, scan and the grid search; cpu, piscina and
# the router, 5 rounds each; slice-misses: the three rows those missed by (scan 4M u32 and f32,
# convLayer L1 B=100) again over 9 rounds; slice-conv9: conv2d and convLayer over 9 rounds. One command may run at most 600 s. Everything in $OUT/s40-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
part=${1:?usage: gpu-host-2026-12-02-s40.sh slice-conv|slice-rest|slice-misses|slice-conv9}
export VK_DRIVER_FILES=/nonexistent/icd.json __EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/egl.json
T="taskset -c 2,3"
host_begin
{ $T node -p 'require("os").availableParallelism()'; } > "$OUT/slice.txt" 2>&1
small() {
  timeout 560 $T node apps/bench/dist/cli.js --workload small --no-progress --backend cpu,piscina,kernelkit --variant wasm-simd,routed "$@" \
    --json "$OUT/bench-$part.json" --md "$OUT/bench-$part.md" > "$OUT/bench-$part.out" 2> "$OUT/bench-$part.log"
  echo "bench $part rc=$?"; grep -v '^Warning\|^    at \|^$' "$OUT/bench-$part.log" | tail -c 2000
}
case "$part" in
  slice-conv) small --rounds 5 --op conv2d,convLayer ;;
  slice-rest) small --rounds 5 --op stencil3d,scan,gridSearch ;;
  slice-conv9) small --rounds 9 --op conv2d,convLayer ;;
  slice-misses) small --rounds 9 --op scan,convLayer --case scan-4M-u32,scan-4M-f32,convlayer-L1-b100 ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "s40-$part"
