#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-03-s43.sh PART
# Issue 16 on the seed workload, side by side: the router's rows, each followed in the router's own
# process by turns of back-to-back calls of the router and of every backend/variant it weighed, so
# both share that process's speed. side-conv: conv2d and convLayer; side-rest: stencil3d, scan and
# the grid search. One command may run at most 600 s. Pack with GPU_HOST_PACK_LEAN=1.
# Everything in $OUT/s43-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
part=${1:?usage: gpu-host-2026-12-03-s43.sh side-conv|side-rest}
host_begin
case "$part" in
  side-conv) bench s43-side-conv 560 --op conv2d,convLayer --backend kernelkit --no-floor ;;
  side-rest) bench s43-side-rest 560 --op stencil3d,scan,gridSearch --backend kernelkit --no-floor ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "s43-$part"
