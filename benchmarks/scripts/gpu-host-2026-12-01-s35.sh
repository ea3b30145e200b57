#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-01-s35.sh a|b|c
# Issue 16: do the router's trial calls run at the speed its candidates settle at?
# a = the settling study on the rows that missed 1.1x on 2026-12-01 (s34) and the two where the
# router's Piscina trial ran faster than Piscina's own process ever did (80 routed calls per case,
# then each candidate tried in a process of its own); b and c = those rows in the bench,
# 3 processes per backend. The code has Piscina's calling-thread share of small conv calls
# (callerShare, up to 2^26 multiply-adds a share), which the convLayer B=100 rows of part c are under.
# Pack with GPU_HOST_PACK_LEAN=1. Everything in $OUT/s35-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
B=$ROUTER_RACE_BACKENDS
V=$ROUTER_RACE_VARIANTS
case "${1:?a, b or c}" in
  a)
    timeout 420 node apps/studies/dist/router/settling.js --workload seed --cases scan-40M-u32,convlayer-L2-b1000,convlayer-L1-b1000,stencil-256-s10,conv2d-1x8192-k5 --calls 80 --direct > "$OUT/settling.txt" 2> "$OUT/settling.log"
    echo "settling rc=$?"; grep -v '^Warning\|^    at \|^$' "$OUT/settling.log" | tail -5; cat "$OUT/settling.txt" | cut -c1-400 ;;
  b) bench s35b 540 --op conv2d,stencil3d,scan,convLayer --case conv2d-1x8192-k5,stencil-256-s10,scan-40M-u32,convlayer-L2-b1000,convlayer-L1-b1000 --backend $B --variant $V --rounds 3 --no-floor ;;
  c) bench s35c 540 --op scan,convLayer --case scan-40M-f32,convlayer-L1-b100,convlayer-L2-b100,convlayer-L1-b10000 --backend $B --variant $V --rounds 3 --no-floor ;;
  *) echo "unknown part $1" >&2; exit 2 ;;
esac
host_end "s35-$1"
