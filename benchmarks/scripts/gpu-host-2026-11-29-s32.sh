#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s32.sh a|b|c|d|e
# Issue 16's H200 target on the code with WebGPU's queue.writeBuffer uploads: all 16 seed rows,
# the router against WebGPU and Piscina (the cpu backend is 3x or more behind the best row on every
# seed case, so it is left out), 3 processes per backend, best variants only. Four parts, one per
# device command (each under the 600 s limit, about 90 s a case): a = conv2d and stencil3d 64^3/256^3,
# b = convLayer B=100 and 1000, c = stencil3d 512^3 and scan, d = convLayer B=10000 and the grid search. Pack with GPU_HOST_PACK_LEAN=1.
# Everything in $OUT/s32-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
B=$ROUTER_RACE_BACKENDS
V=$ROUTER_RACE_VARIANTS
case "${1:?a, b, c or d}" in
  a) bench s32a 560 --op conv2d,stencil3d --case conv2d-16x2048-k11,conv2d-1x8192-k5,stencil-64-s100,stencil-256-s10 --backend $B --variant $V --rounds 3 --no-floor ;;
  b) bench s32b 560 --op convLayer --case convlayer-L1-b100,convlayer-L2-b100,convlayer-L1-b1000,convlayer-L2-b1000 --backend $B --variant $V --rounds 3 --no-floor ;;
  c) bench s32c 560 --op stencil3d,scan --case stencil-512-s10,scan-40M-u32,scan-40M-f32,scan-400M-f32 --backend $B --variant $V --rounds 3 --no-floor ;;
  d) bench s32d 560 --op convLayer,gridSearch --case convlayer-L1-b10000,convlayer-L2-b10000,grid-cs610-8,grid-cs610-full --backend $B --variant $V --rounds 3 --no-floor ;;
  # After the router's and the bench's warm-ups until results reuse memory: the two scan rows that
  # missed 1.1x in part c, 2 processes per backend, within what was left of the session's device time.
  e) bench s32e 200 --op scan --case scan-40M-u32,scan-40M-f32 --backend $B --variant $V --rounds 2 --no-floor ;;
  *) echo "unknown part $1" >&2; exit 2 ;;
esac
host_end "s32-$1"
