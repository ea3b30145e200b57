#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-03-s43.sh PART
# Issue 16 on the seed workload, side by side: the router's rows, each followed in the router's own
# process by turns of back-to-back calls of the router and of every backend/variant it weighed, so
# both share that process's speed. side-conv: conv2d and convLayer; side-rest: stencil3d, scan and
# the grid search. cpu-peers (issue 19, with pooled conv results left in module memory, no copy
# out): on a 2-core slice (taskset -c 2,3, GPU hidden) the phases and the cpu backend, Piscina and
# onnxruntime interleaved on the plain and the relaxed build; then on all 16 cores the seed conv
# rows, Piscina against onnxruntime on 16 threads (pack with GPU_HOST_PACK_LEAN=cpu-peers).
# One command may run at most 600 s. Pack side-* with GPU_HOST_PACK_LEAN=1.
# Everything in $OUT/s43-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
part=${1:?usage: gpu-host-2026-12-03-s43.sh side-conv|side-rest|cpu-peers}
host_begin
case "$part" in
  side-conv) bench s43-side-conv 560 --op conv2d,convLayer --backend kernelkit --no-floor ;;
  side-rest) bench s43-side-rest 560 --op stencil3d,scan,gridSearch --backend kernelkit --no-floor ;;
  cpu-peers)
    CASES=conv2d-4x512-k11,conv2d-1x1024-k5,convlayer-L1-b100,convlayer-L2-b100
    ( export VK_DRIVER_FILES=/nonexistent/icd.json __EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/egl.json
      T="taskset -c 2,3"
      timeout 60 $T node apps/studies/dist/piscina/phases.js --threads 2 --calls 60 --out "$OUT/phases" > "$OUT/phases.log" 2>&1; echo "phases rc=$?"
      timeout 100 $T node benchmarks/scripts/cpu-vs-peers-interleaved.mjs $CASES 15 8 > "$OUT/interleaved-plain.txt" 2>&1; echo "plain rc=$?"; tail -n 4 "$OUT/interleaved-plain.txt"
      KERNELKIT_WASM_SIMD=relaxed timeout 90 $T node benchmarks/scripts/cpu-vs-peers-interleaved.mjs $CASES 12 8 > "$OUT/interleaved-relaxed.txt" 2>&1; echo "relaxed rc=$?"; tail -n 4 "$OUT/interleaved-relaxed.txt" )
    tail -n 5 "$OUT/phases/"*.md
    bench s43-conv16 290 --op conv2d,convLayer --backend piscina,onnxruntime --variant wasm-simd,16t ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "s43-$part"
