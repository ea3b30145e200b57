#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s31.sh conv|rest|again|conv16
# The whole seed workload with the code every open issue closes on, in two calls (one per device
# command): `conv` is conv2d and convLayer beside onnxruntime on 1 and 16 threads, `rest` is
# stencil3d, scan and the grid search; both with the router's row and the physical floor. `again`
# re-runs the rows where the router came out over 1.1x the best backend, 3 processes per backend.
# `conv16` is issue 19's 16-core table: Piscina against onnxruntime on 16 threads on the seed conv
# rows. Everything in $OUT/s31-PART.tar.gz. Pack with GPU_HOST_PACK_LEAN=1 for `rest` and `again`,
# GPU_HOST_PACK_LEAN=cpu-peers for `conv16`; `conv` needs the onnxruntime peer too (=onnxruntime),
# and its run of 2026-11-29 went with the lean pack, so without its peer rows.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
case "${1:?conv, rest, again or conv16}" in
  conv) bench_conv ;;
  rest) bench_rest ;;
  again) bench again 560 --op conv2d,stencil3d,scan,gridSearch,convLayer \
    --case conv2d-16x2048-k11,stencil-64-s100,stencil-256-s10,scan-40M-u32,scan-40M-f32,grid-cs610-full,convlayer-L1-b100 \
    --backend piscina,webgpu,kernelkit --variant wasm-simd,auto,streamed,decoupled-subgroups,pruned,routed --rounds 3 --no-floor ;;
  conv16) bench conv16 300 --op conv2d,convLayer --backend piscina,onnxruntime --variant wasm-simd,16t ;;
  *) echo "unknown part $1" >&2; exit 2 ;;
esac
host_end "s31-$1"
